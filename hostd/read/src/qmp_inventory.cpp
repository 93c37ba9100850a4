// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/qmp_inventory.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "vcpufold/common/monotonic_clock.h"
#include "vcpufold/common/process_stat.h"
#include "vcpufold/common/system_paths.h"
#include "vcpufold/hostd/cgroup_weight.h"
#include "vcpufold/hostd/channel_peer.h"
#include "vcpufold/hostd/qemu_threads.h"

namespace vcpufold::hostd {
namespace {

constexpr int kQmpTimeoutMs = 1000;
constexpr std::size_t kParallelQueries = 32;  // monitors asked at once
constexpr std::int64_t kRetryMinNs = 1'000'000'000;   // a monitor that failed is tried again after 1 s,
constexpr std::int64_t kRetryMaxNs = 30'000'000'000;  // doubling up to 30 s
// A running QEMU's monitor is asked again this often, for vCPU hotplug.
constexpr std::int64_t kRequeryNs = 30'000'000'000;

bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() > suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

QmpInventory::QmpInventory(RootedFs fs, std::string directory, std::vector<QmpVmConfig> declared,
                           std::optional<uid_t> socketOwner)
    : fs_(std::move(fs)), directory_(std::move(directory)), declared_(std::move(declared)), socketOwner_(socketOwner) {}

std::string QmpInventory::describe() const {
  std::string text = "QMP";
  if (!directory_.empty()) text += " (directory " + directory_ + ")";
  if (!declared_.empty()) text += " (" + std::to_string(declared_.size()) + " declared VMs)";
  return text;
}

std::vector<QmpVmConfig> QmpInventory::candidates() {
  std::vector<QmpVmConfig> all = declared_;
  if (directory_.empty()) return all;
  // Sockets are host paths given by the operator, not system files: no RootedFs.
  const RootedFs host("/");
  for (const auto& entry : host.listDirectory(directory_)) {
    if (!endsWith(entry, ".qmp")) continue;
    const std::string name = entry.substr(0, entry.size() - 4);
    const std::string hint = directory_ + "/" + name + ".hint.sock";
    if (!host.exists(hint)) continue;
    // Only sockets that are what they say: no symlinks out of the directory,
    // owned by root or by hostd's own user (who could start QEMU anyway).
    if (auto refused = refusedSocket(directory_ + "/" + entry)) {
      noteOnce(name, *refused);
      continue;
    }
    if (auto refused = refusedSocket(hint)) {
      noteOnce(name, *refused);
      continue;
    }
    bool declared = false;
    for (const auto& vm : declared_) declared = declared || vm.name == name;
    if (!declared) all.push_back(QmpVmConfig{name, directory_ + "/" + entry, hint, FoldPolicy{}, false});
  }
  return all;
}

std::optional<std::string> QmpInventory::refusedSocket(const std::string& path) const {
  if (auto refused = refusedSocketFile(path, socketOwner_)) return *refused + "; skipped";
  return std::nullopt;
}

void QmpInventory::addNote(std::string note) {
  const std::lock_guard lock(notesMutex_);
  notes_.push_back(std::move(note));
}

void QmpInventory::noteOnce(const std::string& name, const std::string& note) {
  const std::lock_guard lock(notesMutex_);
  auto& last = lastNotes_[name];
  if (last == note) return;
  last = note;
  notes_.push_back(name + ": " + note);
}

std::optional<std::uint64_t> QmpInventory::startTicksOf(pid_t pid) const {
  auto text = fs_.readFile(std::string(paths::kProcDir) + "/" + std::to_string(pid) + "/stat");
  if (!text) return std::nullopt;
  auto stat = parseProcessStat(*text);
  if (!stat) return std::nullopt;
  return stat->startTicks;
}

bool QmpInventory::stillRunning(const Vm& vm) const {
  if (vm.pid == 0) return false;
  const auto started = startTicksOf(vm.pid);
  return started && *started == vm.startTicks;
}

bool QmpInventory::query(const std::string& name, Vm& vm, std::int64_t now) {
  const auto failed = [&](const std::string& why) {
    noteOnce(name, why);
    vm.retryBackoffNs = std::clamp(vm.retryBackoffNs * 2, kRetryMinNs, kRetryMaxNs);
    vm.retryAtNs = monotonicNs() + vm.retryBackoffNs;  // from the failure: the deadline itself took time
    return false;
  };
  // The connection lives for this function only: the monitor is free again
  // for QEMU's other clients as soon as it has answered.
  // One deadline for the whole exchange: a monitor that answers nothing
  // costs kQmpTimeoutMs once, not once per command.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kQmpTimeoutMs);
  const auto remainingMs = [deadline] {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    return static_cast<int>(std::max<std::int64_t>(left.count(), 1));
  };
  auto client = QmpClient::connect(vm.config.qmpSocket, remainingMs());
  if (!client) return failed(client.error().message);
  const pid_t pid = (*client)->peerPid();
  // QEMU's own -name, for the log: a socket that serves another VM than its file says is worth seeing.
  std::string qemuName = "unnamed";
  if (auto answer = (*client)->execute(R"({"execute":"query-name"})", remainingMs())) {
    try {
      qemuName = nlohmann::json::parse(*answer).value("name", "unnamed");
    } catch (const nlohmann::json::exception&) {
    }
  }
  auto answer = (*client)->execute(R"({"execute":"query-cpus-fast"})", remainingMs());
  auto vcpus = answer ? parseQueryCpusJson(*answer) : Expected<std::vector<QmpVcpu>>(answer.error());
  for (const auto& event : (*client)->drainEvents())
    addNote(name + ": QEMU event " + event.name + " " + event.detailJson);
  // The monitor failed, not (yet) the VM: its vCPU threads are still sampled
  // with the last known thread ids, so its CPU time is not mistaken for
  // non-VM load.
  if (!vcpus) return failed(vcpus.error().message + "; asked again with backoff");
  const auto started = startTicksOf(pid);
  // Said when the process is new to hostd, not at every re-query.
  const bool samePid = vm.pid == pid;
  if (!samePid || (started && *started != vm.startTicks))
    addNote(name + ": QEMU pid " + std::to_string(pid) + " (-name " + qemuName + "), " +
                     std::to_string(vcpus->size()) + " vCPUs" +
                     (vm.pid == 0 ? ""
                      : samePid   ? "; a new process under the same pid"
                                  : "; it replaces pid " + std::to_string(vm.pid)));
  if (!started)
    noteOnce(name, "QEMU pid " + std::to_string(pid) + " is not visible under " + paths::kProcDir +
                       ": its monitor is asked every cycle and its vCPUs cannot be sampled");
  vm.pid = pid;
  vm.startTicks = started.value_or(0);
  vm.vcpus = std::move(*vcpus);
  vm.queriedAtNs = now;
  vm.retryBackoffNs = 0;
  vm.retryAtNs = 0;
  if (started) {
    const std::lock_guard lock(notesMutex_);
    lastNotes_.erase(name);
  }
  return true;
}

// A vCPU hot-plug or unplug: QEMU's vCPU threads (named "CPU n/...", read
// from /proc without touching the monitor) are no longer the ones the last
// query-cpus-fast listed. Then the monitor is asked again in this refresh,
// not after kRequeryNs.
bool QmpInventory::vcpuThreadsChanged(const Vm& vm) const {
  if (vm.pid == 0 || vm.vcpus.empty()) return false;
  auto threads = findQemuVcpuThreads(fs_, vm.pid);
  if (!threads) return false;  // threads not named as QEMU names them: the periodic query stands
  if (threads->size() != vm.vcpus.size()) return true;
  for (std::size_t i = 0; i < threads->size(); ++i)
    if ((*threads)[i] != static_cast<pid_t>(vm.vcpus[i].threadId)) return true;
  return false;
}

// The monitors due are asked at once, kParallelQueries at a time, each with
// its own deadline: 20 silent monitors cost the refresh one deadline, not
// twenty, so every other VM's sample comes on time.
void QmpInventory::queryAll(const std::vector<std::pair<std::string, Vm*>>& due, std::int64_t now) {
  if (due.size() == 1) {
    query(due[0].first, *due[0].second, now);
    return;
  }
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < due.size(); i = next++) query(due[i].first, *due[i].second, now);
  };
  std::vector<std::thread> workers;
  for (std::size_t k = 0; k < std::min(due.size(), kParallelQueries); ++k) workers.emplace_back(work);
  for (auto& worker : workers) worker.join();
}

Expected<std::vector<VmRecord>> QmpInventory::refresh() {
  std::map<std::string, bool> seen;
  std::vector<std::pair<std::string, Vm*>> dueVms;
  const std::int64_t now = monotonicNs();
  for (const auto& candidate : candidates()) {
    seen[candidate.name] = true;
    if (candidate.qmpSocket.size() > paths::kMaxSocketPath || candidate.hintSocket.size() > paths::kMaxSocketPath) {
      noteOnce(candidate.name, "a socket path is over " + std::to_string(paths::kMaxSocketPath) + " bytes; skipped");
      continue;
    }
    auto& vm = vms_[candidate.name];
    vm.config = candidate;
    const bool running = stillRunning(vm);
    const bool due = !running || vm.vcpus.empty() || now - vm.queriedAtNs >= kRequeryNs || vcpuThreadsChanged(vm);
    // A monitor that failed is not asked again at once: a hung QEMU costs the
    // inventory thread one timeout per backoff period, not per cycle.
    if (!due || now < vm.retryAtNs) continue;
    dueVms.emplace_back(candidate.name, &vm);
  }
  queryAll(dueVms, now);
  for (auto it = vms_.begin(); it != vms_.end();) it = seen.count(it->first) ? std::next(it) : vms_.erase(it);
  // A QEMU that exited (a stale socket file stays behind when it is killed)
  // and that no monitor answers for is gone, not a VM with a failing monitor:
  // its samples would be missing for good and hold every VM's hints.
  for (auto it = vms_.begin(); it != vms_.end();) {
    if (it->second.pid != 0 && it->second.queriedAtNs != now && !stillRunning(it->second)) {
      notes_.push_back(it->first + ": QEMU pid " + std::to_string(it->second.pid) + " has exited; gone");
      it = vms_.erase(it);
    } else {
      ++it;
    }
  }
  std::erase_if(lastNotes_, [&seen](const auto& entry) { return !seen.count(entry.first); });

  std::vector<VmRecord> records;
  const bool cgroupV2 = fs_.exists(std::string(paths::kCgroupRoot) + "/cgroup.controllers");
  for (const auto& [name, vm] : vms_) {
    if (vm.vcpus.empty()) continue;  // never answered query-cpus-fast: not known as a VM yet
    VmRecord record;
    record.name = name;
    record.vcpus = static_cast<std::uint32_t>(vm.vcpus.size());
    record.channelSocket = vm.config.hintSocket;
    record.policy = vm.config.policy;
    record.policySource = vm.config.declared ? PolicySource::Config : PolicySource::Default;
    // The QEMU's cgroup weight (Proxmox's cpuunits), unless [[vm]] sets one.
    if (auto weight = readProcessCpuWeight(fs_, vm.pid, cgroupV2)) record.cgroupWeight = *weight;
    // Read at every refresh, from /proc (not the monitor): a re-pin shows at the next cycle.
    std::vector<pid_t> threads;
    for (const auto& vcpu : vm.vcpus) threads.push_back(static_cast<pid_t>(vcpu.threadId));
    if (auto affinities = readThreadAffinities(fs_, vm.pid, threads))
      record.placement = placementOf(*affinities, "vCPU threads' affinity");
    records.push_back(record);
  }
  return records;
}

Expected<std::map<std::string, VmSample>> QmpInventory::sample() {
  std::map<std::string, VmSample> samples;
  for (const auto& [name, vm] : vms_) {
    if (vm.vcpus.empty()) continue;
    VmSample sample{{}, monotonicNs(), std::nullopt};
    const std::string task = std::string(paths::kProcDir) + "/" + std::to_string(vm.pid) + "/task/";
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
    if (!complete) continue;
    // The whole process's CPU time (every thread): what its vCPUs did not use
    // of it is QEMU's own work for this VM, counted as the VM's load.
    if (auto text = fs_.readFile(std::string(paths::kProcDir) + "/" + std::to_string(vm.pid) + "/stat"))
      if (auto stat = parseProcessStat(*text))
        sample.processRunNs = (stat->userTicks + stat->systemTicks) * nanosecondsPerClockTick();
    samples[name] = std::move(sample);
  }
  return samples;
}

std::vector<std::string> QmpInventory::takeNotes() { return std::exchange(notes_, {}); }

}  // namespace vcpufold::hostd
