// SPDX-License-Identifier: GPL-2.0-or-later
#include "fleet.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "bench_text.h"

namespace vcpufold::bench {

namespace {

std::string cpuRange(unsigned first, unsigned count) {
  return count == 1 ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(first + count - 1);
}

// The guest's CPUs as the agent reads them: `vcpus` online CPUs, in cores of
// `threadsPerCore` consecutive threads (QEMU's numbering), one NUMA node.
void sizeGuestTree(const testing::FixtureTree& tree, unsigned vcpus, unsigned threadsPerCore) {
  const std::string all = cpuRange(0, vcpus) + "\n";
  const std::string cpuDir = "/sys/devices/system/cpu";
  for (const char* file : {"/online", "/possible", "/present"}) tree.write(cpuDir + file, all);
  tree.write("/sys/devices/system/node/node0/cpulist", all);
  tree.write("/sys/fs/cgroup/cpuset.cpus.effective", all);
  tree.write("/sys/fs/cgroup/system.slice/cpuset.cpus.effective", all);
  for (unsigned cpu = 0; cpu < vcpus; ++cpu) {
    const std::string topology = cpuDir + "/cpu" + std::to_string(cpu) + "/topology/";
    const unsigned core = cpu / threadsPerCore;
    const std::string siblings = cpuRange(core * threadsPerCore, threadsPerCore) + "\n";
    tree.write(topology + "core_id", std::to_string(core) + "\n");
    tree.write(topology + "physical_package_id", "0\n");
    tree.write(topology + "thread_siblings_list", siblings);
    tree.write(topology + "core_cpus_list", siblings);
    if (cpu > 0) tree.write(cpuDir + "/cpu" + std::to_string(cpu) + "/online", "1\n");
  }
}

// Where the guest trees go: a memory filesystem, as the guest's /proc and
// /sys are. Each emulated VM renames a new /proc/stat and /proc/loadavg into its tree ten times
// a second; on the host's disk filesystem that journal work is host load that
// its scheduler places among the VMs, and it widened the weighted split
// between their groups (bench/contention/README.md).
std::filesystem::path guestTreeParent() {
  std::error_code ignored;
  return std::filesystem::is_directory("/dev/shm", ignored) ? std::filesystem::path("/dev/shm")
                                                            : std::filesystem::path();
}

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

VmStats readVmStats(const std::string& path) {
  VmStats stats;
  std::ifstream file(path);
  std::string key;
  double value = 0;
  while (file >> key >> value) {
    if (key == "monotonic_ns") stats.atNs = value;
    if (key == "operations") stats.operations = value;
    if (key == "run_ns") stats.runNs = value;
    if (key == "wait_ns") stats.waitNs = value;
    if (key == "context_switches") stats.contextSwitches = value;
    if (key == "preferred") stats.preferred = static_cast<unsigned>(value);
  }
  return stats;
}

Fleet::Fleet(const FleetBinaries& binaries, std::string directory, const std::vector<VmSpec>& vms,
             const FleetOptions& options)
    : binaries_(binaries), directory_(std::move(directory)), options_(options) {
  std::filesystem::remove_all(directory_);
  std::filesystem::create_directories(directory_);
  if (options_.pcpus > 0) {
    cpuset_ = std::make_unique<HostCpuset>(options_.pcpus);
    if (!cpuset_->ok()) throw std::runtime_error("the VMs' cpuset: " + cpuset_->error());
  }
  for (const auto& spec : vms) {
    EmulatedVmProcess vm;
    vm.spec = spec;
    vm.tree = std::make_unique<testing::FixtureTree>("lab-guest-4vcpu", guestTreeParent());
    sizeGuestTree(*vm.tree, spec.vcpus, spec.threadsPerCore);
    vm.tree->write("/sys/devices/system/cpu/preferred", cpuRange(0, spec.vcpus) + "\n");
    vm.tree->write("/etc/vcpufold/agent.toml", "[agent]\ninterval_ms = " + std::to_string(options_.tickMs) +
                                                   "\nactuator = \"kernel\"\nlog_level = \"debug\"\n");
    const std::string base = directory_ + "/" + spec.name;
    const unsigned tasks = tasksAt(spec.schedule, 0);
    writeWholeFile(base + ".load", std::to_string(tasks) + "\n");
    vm.group = std::make_unique<CpuGroup>(spec.name, spec.weight);
    vm.vm = std::make_unique<testing::ChildProcess>(
        binaries_.emulatedVm,
        std::vector<std::string>{"--name", spec.name, "--dir", directory_, "--vcpus", std::to_string(spec.vcpus),
                                 "--workload", spec.workload, "--guest-tree", vm.tree->root().string(), "--busy",
                                 std::to_string(tasks)},
        base + ".vm.log");
    if (!vm.group->adopt(vm.vm->pid())) {
      if (weightsApplied_)
        std::fprintf(stderr, "bench: %s: weights not applied: %s\n", spec.name.c_str(),
                     vm.group->ok() ? "cannot move the VM into its group" : vm.group->error().c_str());
      weightsApplied_ = false;
    }
    if (cpuset_ && !cpuset_->adopt(vm.vm->pid()))
      throw std::runtime_error(spec.name + ": cannot move the VM into the cpuset " + cpuset_->cpus());
    vms_.push_back(std::move(vm));
  }
  if (!testing::waitUntil([&] { return allExist(".qmp") && allExist(".stats"); }, 10'000))
    throw std::runtime_error("the emulated VMs did not start; see " + directory_ + "/*.vm.log");
  // Each VM's threads are running now (its statistics exist), so threads it
  // starts later cannot follow its control thread out of the group.
  bool saidSo = false;
  for (auto& vm : vms_)
    if (!vm.group->releaseThread(vm.vm->pid()) && !saidSo) {
      saidSo = true;
      std::fprintf(stderr, "bench: the VMs' control threads stay in the VMs' CPU groups (%s)\n",
                   vm.group->ok() ? "cgroup v2 keeps a process's threads together" : vm.group->error().c_str());
    }
}

Fleet::~Fleet() { stop(); }

bool Fleet::allExist(const std::string& suffix, bool agentsOnly) const {
  return std::all_of(vms_.begin(), vms_.end(), [&](const EmulatedVmProcess& vm) {
    return (agentsOnly && !vm.spec.agent) || std::filesystem::exists(directory_ + "/" + vm.spec.name + suffix);
  });
}

std::string Fleet::file(std::size_t vm, const std::string& suffix) const {
  return directory_ + "/" + vms_[vm].spec.name + suffix;
}

void Fleet::startAgents() {
  for (auto& vm : vms_)
    if (vm.spec.agent)
      vm.agent = std::make_unique<testing::ChildProcess>(
          binaries_.agent,
          std::vector<std::string>{"--root", vm.tree->root().string(), "--port",
                                   "unix-listen:" + directory_ + "/" + vm.spec.name + ".hint.sock"},
          directory_ + "/" + vm.spec.name + ".agent.log");
  if (!testing::waitUntil([&] { return allExist(".hint.sock", true); }, 10'000))
    throw std::runtime_error("the agents did not start listening; see " + directory_ + "/*.agent.log");
}

std::string Fleet::hostRootWithoutOtherLoad() const {
  namespace fs = std::filesystem;
  const fs::path root = directory_ + "/hostroot";
  fs::create_directories(root / "proc");
  fs::create_directories(root / "run");
  fs::create_symlink("/sys", root / "sys");
  // procfs files say size 0: read, not copied.
  std::ifstream live("/proc/stat");
  std::ofstream(root / "proc" / "stat") << live.rdbuf();
  for (const auto& vm : vms_) {
    const std::string pid = std::to_string(vm.vm->pid());
    fs::create_symlink("/proc/" + pid, root / "proc" / pid);
  }
  return root.string();
}

void Fleet::startHostd() {
  std::ostringstream config;
  config << "[hostd]\ninterval_ms = " << options_.tickMs << "\nttl_ticks = 3\nlog_level = \"debug\"\n";
  if (options_.unfoldDelayMs) config << "unfold_delay_ms = " << *options_.unfoldDelayMs << "\n";
  config << "[inventory]\nbackend = \"qmp\"\n";
  if (cpuset_) config << "pool_cgroup = \"" << HostCpuset::kCgroup << "\"\n";
  // Under --root the control socket is a path inside the root.
  const std::string root = options_.hostLoadHidden ? hostRootWithoutOtherLoad() : "";
  config << "[metrics]\naddress = \"\"\n[control]\nsocket = \"" << (root.empty() ? directory_ : "/run")
         << "/hostd.sock\"\n";
  for (const auto& vm : vms_)
    config << "[[vm]]\nname = \"" << vm.spec.name << "\"\nqmp_socket = \"" << directory_ << "/" << vm.spec.name
           << ".qmp\"\nhint_socket = \"" << directory_ << "/" << vm.spec.name
           << ".hint.sock\"\nweight = " << static_cast<long>(vm.spec.weight) << "\n";
  writeWholeFile(directory_ + "/hostd.toml", config.str());
  std::vector<std::string> arguments{"--config", directory_ + "/hostd.toml"};
  if (!root.empty()) arguments.insert(arguments.end(), {"--root", root});
  hostd_ = std::make_unique<testing::ChildProcess>(binaries_.hostd, arguments, directory_ + "/hostd.log");
}

void Fleet::stop() {
  const auto end = [](std::unique_ptr<testing::ChildProcess>& process) {
    if (!process) return;
    process->signal(SIGTERM);
    process->waitExit(5000);
    process.reset();
  };
  end(hostd_);
  // All agents at once (each unfolds and says so before it exits), then all VMs.
  for (auto& vm : vms_)
    if (vm.agent) vm.agent->signal(SIGTERM);
  for (auto& vm : vms_) end(vm.agent);
  for (auto& vm : vms_)
    if (vm.vm) vm.vm->signal(SIGTERM);
  for (auto& vm : vms_) end(vm.vm);
  for (auto& vm : vms_) vm.group.reset();
}

void Fleet::setTasks(std::size_t vm, unsigned tasks) const {
  writeWholeFile(file(vm, ".load"), std::to_string(tasks) + "\n");
}

void Fleet::setPreferred(std::size_t vm, unsigned count) const {
  vms_[vm].tree->write("/sys/devices/system/cpu/preferred", cpuRange(0, std::max(count, 1u)) + "\n");
}

}  // namespace vcpufold::bench
