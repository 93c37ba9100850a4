#include "vcpufold/hostd/qmp_inventory.h"

#include <time.h>

#include <nlohmann/json.hpp>

namespace vcpufold::hostd {
namespace {

constexpr int kQmpTimeoutMs = 1000;

std::int64_t monotonicNs() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() > suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

QmpInventory::QmpInventory(RootedFs fs, std::string directory, std::vector<QmpVmConfig> declared)
    : fs_(std::move(fs)), directory_(std::move(directory)), declared_(std::move(declared)) {}

std::string QmpInventory::describe() const {
  std::string text = "QMP";
  if (!directory_.empty()) text += " (directory " + directory_ + ")";
  if (!declared_.empty()) text += " (" + std::to_string(declared_.size()) + " declared VMs)";
  return text;
}

std::vector<QmpVmConfig> QmpInventory::candidates() const {
  std::vector<QmpVmConfig> all = declared_;
  if (directory_.empty()) return all;
  // Sockets are host paths given by the operator, not system files: no RootedFs.
  const RootedFs host("/");
  for (const auto& entry : host.listDirectory(directory_)) {
    if (!endsWith(entry, ".qmp")) continue;
    const std::string name = entry.substr(0, entry.size() - 4);
    const std::string hint = directory_ + "/" + name + ".hint.sock";
    if (!host.exists(hint)) continue;
    bool declared = false;
    for (const auto& vm : declared_) declared = declared || vm.name == name;
    if (!declared) all.push_back(QmpVmConfig{name, directory_ + "/" + entry, hint, FoldPolicy{}});
  }
  return all;
}

Expected<std::vector<VmRecord>> QmpInventory::refresh() {
  std::map<std::string, bool> seen;
  for (const auto& candidate : candidates()) {
    seen[candidate.name] = true;
    auto& vm = vms_[candidate.name];
    vm.config = candidate;
    if (!vm.client || vm.client->closed()) {
      auto client = QmpClient::connect(candidate.qmpSocket, kQmpTimeoutMs);
      if (!client) {
        vms_.erase(candidate.name);
        continue;
      }
      vm.client = std::move(*client);
      // QEMU's own -name, for the log: a socket that serves another VM than its file says is worth seeing.
      std::string qemuName = "unnamed";
      if (auto answer = vm.client->execute(R"({"execute":"query-name"})", kQmpTimeoutMs)) {
        try {
          qemuName = nlohmann::json::parse(*answer).value("name", "unnamed");
        } catch (const nlohmann::json::exception&) {
        }
      }
      notes_.push_back(candidate.name + ": QMP connected (QEMU pid " + std::to_string(vm.client->peerPid()) +
                       ", -name " + qemuName + ")");
    }
    for (const auto& event : vm.client->drainEvents())
      notes_.push_back(candidate.name + ": QEMU event " + event.name + " " + event.detailJson);
    auto answer = vm.client->execute(R"({"execute":"query-cpus-fast"})", kQmpTimeoutMs);
    if (!answer) {
      notes_.push_back(candidate.name + ": " + answer.error().message + "; dropped");
      vms_.erase(candidate.name);
      continue;
    }
    try {
      auto vcpus = parseQueryCpusFast(nlohmann::json::parse(*answer));
      if (!vcpus) throw std::runtime_error(vcpus.error().message);
      vm.vcpus = *vcpus;
    } catch (const std::exception& error) {
      notes_.push_back(candidate.name + ": " + error.what() + "; dropped");
      vms_.erase(candidate.name);
    }
  }
  for (auto it = vms_.begin(); it != vms_.end();) it = seen.count(it->first) ? std::next(it) : vms_.erase(it);

  std::vector<VmRecord> records;
  for (const auto& [name, vm] : vms_) {
    VmRecord record;
    record.name = name;
    record.vcpus = static_cast<std::uint32_t>(vm.vcpus.size());
    record.channelSocket = vm.config.hintSocket;
    record.policy = vm.config.policy;
    records.push_back(record);
  }
  return records;
}

Expected<std::map<std::string, VmSample>> QmpInventory::sample() {
  std::map<std::string, VmSample> samples;
  for (const auto& [name, vm] : vms_) {
    VmSample sample{{}, monotonicNs()};
    const std::string task = "/proc/" + std::to_string(vm.client->peerPid()) + "/task/";
    bool complete = true;
    for (const auto& vcpu : vm.vcpus) {
      auto text = fs_.readFile(task + std::to_string(vcpu.threadId) + "/schedstat");
      auto counters = text ? parseSchedstat(*text) : Expected<VcpuCounters>(text.error());
      if (!counters) {
        complete = false;
        break;
      }
      sample.vcpus.push_back(*counters);
    }
    if (complete) samples[name] = std::move(sample);
  }
  return samples;
}

std::vector<std::string> QmpInventory::takeNotes() { return std::exchange(notes_, {}); }

}  // namespace vcpufold::hostd
