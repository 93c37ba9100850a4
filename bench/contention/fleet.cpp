#include "fleet.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace vcpufold::bench {

namespace {

void writeText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

std::string firstCpus(unsigned count) { return count == 1 ? "0" : "0-" + std::to_string(count - 1); }

}  // namespace

long monotonicNowNs() {
  return static_cast<long>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

std::vector<std::pair<long, unsigned>> readTimeline(const std::string& path) {
  std::vector<std::pair<long, unsigned>> entries;
  std::ifstream file(path);
  long at = 0;
  unsigned value = 0;
  while (file >> at >> value) entries.emplace_back(at, value);
  return entries;
}

Fleet::Fleet(const FleetBinaries& binaries, std::string directory, const std::vector<VmSpec>& vms,
             const std::string& workload, unsigned tickMs)
    : binaries_(binaries), directory_(std::move(directory)), tickMs_(tickMs) {
  std::filesystem::remove_all(directory_);
  std::filesystem::create_directories(directory_);
  for (const auto& spec : vms) {
    EmulatedVmProcess vm;
    vm.spec = spec;
    vm.tree = std::make_unique<testing::FixtureTree>("lab-guest-4vcpu");
    vm.tree->write("/sys/devices/system/cpu/preferred", firstCpus(spec.vcpus) + "\n");
    vm.tree->write("/etc/vcpufold/agent.toml", "[agent]\ninterval_ms = " + std::to_string(tickMs) +
                                                   "\nactuator = \"kernel\"\nlog_level = \"debug\"\n");
    const std::string base = directory_ + "/" + spec.name;
    writeText(base + ".load", std::to_string(spec.tasksBefore) + "\n");
    vm.vm = std::make_unique<testing::ChildProcess>(
        binaries_.emulatedVm,
        std::vector<std::string>{"--name", spec.name, "--dir", directory_, "--vcpus", std::to_string(spec.vcpus),
                                 "--workload", workload, "--guest-tree", vm.tree->root().string(), "--busy",
                                 std::to_string(spec.tasksBefore)},
        base + ".vm.log");
    vm.group = std::make_unique<CpuGroup>(spec.name, spec.weight);
    if (!vm.group->adopt(vm.vm->pid())) {
      if (weightsApplied_)
        std::fprintf(stderr, "bench: %s: weights not applied: %s\n", spec.name.c_str(),
                     vm.group->ok() ? "cannot move the VM into its group" : vm.group->error().c_str());
      weightsApplied_ = false;
    }
    vms_.push_back(std::move(vm));
  }
  if (!testing::waitUntil([&] { return allExist(".qmp") && allExist(".stats"); }, 10'000))
    throw std::runtime_error("the emulated VMs did not start; see " + directory_ + "/*.vm.log");
}

Fleet::~Fleet() { stop(); }

bool Fleet::allExist(const std::string& suffix) const {
  return std::all_of(vms_.begin(), vms_.end(), [&](const EmulatedVmProcess& vm) {
    return std::filesystem::exists(directory_ + "/" + vm.spec.name + suffix);
  });
}

std::string Fleet::file(std::size_t vm, const std::string& suffix) const {
  return directory_ + "/" + vms_[vm].spec.name + suffix;
}

void Fleet::startAgents() {
  for (auto& vm : vms_)
    vm.agent = std::make_unique<testing::ChildProcess>(
        binaries_.agent,
        std::vector<std::string>{"--root", vm.tree->root().string(), "--port",
                                 "unix-listen:" + directory_ + "/" + vm.spec.name + ".hint.sock"},
        directory_ + "/" + vm.spec.name + ".agent.log");
  if (!testing::waitUntil([&] { return allExist(".hint.sock"); }, 10'000))
    throw std::runtime_error("the agents did not start listening; see " + directory_ + "/*.agent.log");
}

void Fleet::startHostd() {
  std::ostringstream config;
  config << "[hostd]\ninterval_ms = " << tickMs_ << "\nttl_ticks = 3\nlog_level = \"debug\"\n"
         << "[inventory]\nbackend = \"qmp\"\n[metrics]\naddress = \"\"\n[control]\nsocket = \"" << directory_
         << "/hostd.sock\"\n";
  for (const auto& vm : vms_)
    config << "[[vm]]\nname = \"" << vm.spec.name << "\"\nqmp_socket = \"" << directory_ << "/" << vm.spec.name
           << ".qmp\"\nhint_socket = \"" << directory_ << "/" << vm.spec.name
           << ".hint.sock\"\nweight = " << vm.spec.weight << "\n";
  writeText(directory_ + "/hostd.toml", config.str());
  hostd_ = std::make_unique<testing::ChildProcess>(
      binaries_.hostd, std::vector<std::string>{"--config", directory_ + "/hostd.toml"}, directory_ + "/hostd.log");
}

void Fleet::stop() {
  const auto end = [](std::unique_ptr<testing::ChildProcess>& process) {
    if (!process) return;
    process->signal(SIGTERM);
    process->waitExit(5000);
    process.reset();
  };
  end(hostd_);
  for (auto& vm : vms_) end(vm.agent);
  for (auto& vm : vms_)
    if (vm.vm) vm.vm->signal(SIGTERM);
  for (auto& vm : vms_) end(vm.vm);
}

void Fleet::setTasks(std::size_t vm, unsigned tasks) const {
  writeText(file(vm, ".load"), std::to_string(tasks) + "\n");
}

void Fleet::setPreferred(std::size_t vm, unsigned count) const {
  vms_[vm].tree->write("/sys/devices/system/cpu/preferred", firstCpus(count) + "\n");
}

}  // namespace vcpufold::bench
