// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/inventory_worker.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "vcpufold/common/cpu_list_files.h"
#include "vcpufold/common/system_paths.h"
#include "vcpufold/protocol/cpulist.h"

namespace vcpufold::hostd {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

struct InventoryWorker::Shared {
  std::unique_ptr<Inventory> inventory;
  RootedFs fs;
  std::string poolCgroup;
  SnapshotHandler onSnapshot;
  mutable std::mutex mutex;
  std::condition_variable wake;
  std::chrono::milliseconds period;
  bool stopping = false;
  bool finished = false;
  struct Measurement {
    std::string vm;
    std::chrono::milliseconds window;
    LoadHandler done;
  };
  std::vector<Measurement> measurements;  // asked for, not begun
  Activity activity;
  std::thread thread;

  void enter(const char* step) {
    std::lock_guard lock(mutex);
    activity = Activity{step, Clock::now()};
  }

  void run() {
    std::uint64_t cycle = 0;
    auto next = Clock::now();
    for (;;) {
      std::vector<Measurement> asked;
      {
        std::unique_lock lock(mutex);
        wake.wait_until(lock, next, [this] { return stopping || !measurements.empty(); });
        if (stopping) break;
        asked.swap(measurements);
      }
      // A cycle that is due goes first: measurements asked for meanwhile
      // wait for it, not the snapshots every decision needs for them.
      if (Clock::now() >= next) {
        const auto started = Clock::now();
        HostSnapshot snapshot = cycleOnce(++cycle);
        // A period after this cycle started, but never at once after a cycle
        // that overran (a hung monitor): back-to-back snapshots would make rates
        // over a window of microseconds.
        next = std::max(started + period, Clock::now() + period / 2);
        enter("handing over the snapshot");
        onSnapshot(std::move(snapshot));
        enter("waiting for the next cycle");
      }
      if (!asked.empty()) measure(asked);
    }
    std::lock_guard lock(mutex);
    finished = true;
    wake.notify_all();
  }

  HostSnapshot cycleOnce(std::uint64_t cycle) {
    HostSnapshot snapshot;
    snapshot.cycle = cycle;
    enter("inventory refresh");
    auto refreshed = inventory->refresh();
    enter("vCPU sampling");
    fillSnapshot(*inventory, fs, poolCgroup, refreshed, snapshot);
    return snapshot;
  }

  // Two samples of each VM asked for, the longest window apart; a stop cuts
  // the wait short (the loads are then not known).
  void measure(std::vector<Measurement>& asked) {
    enter("measuring a VM's load");
    std::chrono::milliseconds window{0};
    for (const auto& one : asked) window = std::max(window, one.window);
    // When several VMs ask at once, one sample of every VM serves them all:
    // a libvirt stats call for all domains costs about what one for a single
    // domain does, and on a loaded host each call can take a while.
    const auto sampleAsked = [&] {
      std::map<std::string, VmSample> taken;
      if (asked.size() == 1) {
        if (auto one = inventory->sampleOne(asked.front().vm)) taken.emplace(asked.front().vm, std::move(*one));
      } else if (auto all = inventory->sample()) {
        taken = std::move(*all);
      }
      return taken;
    };
    const auto before = sampleAsked();
    bool stopped = false;
    {
      std::unique_lock lock(mutex);
      stopped = wake.wait_for(lock, window, [this] { return stopping; });
    }
    const auto after = stopped || before.empty() ? std::map<std::string, VmSample>{} : sampleAsked();
    for (auto& one : asked) {
      std::optional<VmLoad> load;
      const auto first = before.find(one.vm), second = after.find(one.vm);
      if (first != before.end() && second != after.end()) load = deriveLoad(first->second, second->second);
      one.done(one.vm, load);
    }
    enter("waiting for the next cycle");
  }

  static void fillSnapshot(Inventory& inventory, const RootedFs& fs, const std::string& poolCgroup,
                           const Expected<std::vector<VmRecord>>& refreshed, HostSnapshot& snapshot);
};

void InventoryWorker::Shared::fillSnapshot(Inventory& inventory, const RootedFs& fs, const std::string& poolCgroup,
                                           const Expected<std::vector<VmRecord>>& refreshed, HostSnapshot& snapshot) {
  if (refreshed) {
    snapshot.inventoryRead = true;
    snapshot.records = *refreshed;
    if (auto samples = inventory.sample())
      snapshot.samples = std::move(*samples);
    else
      snapshot.missing.push_back("vCPU samples: " + samples.error().message);
  } else {
    snapshot.missing.push_back("inventory: " + refreshed.error().message);
  }
  if (auto pool = readVmCpuPool(fs, poolCgroup))
    snapshot.pool = std::move(*pool);
  else
    snapshot.missing.push_back("VM CPU pool: " + pool.error().message);
  snapshot.isolatedCpus = readQuietCpus(fs);
  auto stat = fs.readFile(paths::kProcStat);
  auto parsed = stat ? parseProcStat(*stat) : Expected<ProcStat>(stat.error());
  if (parsed)
    snapshot.cpuTicks = std::move(parsed->perCpu);
  else
    snapshot.missing.push_back("host CPU time: " + parsed.error().message);
  snapshot.cgroupV2 = fs.exists(std::string(paths::kCgroupRoot) + "/cgroup.controllers");
  snapshot.notes = inventory.takeNotes();
  snapshot.takenAt = Clock::now();
}

InventoryWorker::InventoryWorker(std::unique_ptr<Inventory> inventory, RootedFs fs, std::string poolCgroup,
                                 std::chrono::milliseconds period, SnapshotHandler onSnapshot)
    : description_(inventory->describe()), shared_(std::make_shared<Shared>()) {
  shared_->inventory = std::move(inventory);
  shared_->fs = std::move(fs);
  shared_->poolCgroup = std::move(poolCgroup);
  shared_->period = period;
  shared_->onSnapshot = std::move(onSnapshot);
}

InventoryWorker::~InventoryWorker() {
  if (!stop(std::chrono::milliseconds(0)) && shared_->thread.joinable()) {
    // Still inside a call that does not return: the thread keeps its own
    // reference to the shared state and ends with the process.
    shared_->thread.detach();
  }
}

void InventoryWorker::start() {
  shared_->thread = std::thread([shared = shared_] { shared->run(); });
}

bool InventoryWorker::stop(std::chrono::milliseconds patience) {
  if (!shared_->thread.joinable()) return true;
  std::unique_lock lock(shared_->mutex);
  shared_->stopping = true;
  shared_->wake.notify_all();
  if (!shared_->wake.wait_for(lock, patience, [this] { return shared_->finished; })) return false;
  lock.unlock();
  shared_->thread.join();
  return true;
}

void InventoryWorker::measureNow(const std::string& vm, std::chrono::milliseconds window, LoadHandler done) {
  std::lock_guard lock(shared_->mutex);
  for (const auto& waiting : shared_->measurements)
    if (waiting.vm == vm) return;
  shared_->measurements.push_back(Shared::Measurement{vm, window, std::move(done)});
  shared_->wake.notify_all();
}

void InventoryWorker::setPeriod(std::chrono::milliseconds period) {
  std::lock_guard lock(shared_->mutex);
  shared_->period = period;
}

InventoryWorker::Activity InventoryWorker::activity() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->activity;
}

HostSnapshot InventoryWorker::readOnce(Inventory& inventory, const RootedFs& fs, const std::string& poolCgroup,
                                       std::uint64_t cycle) {
  HostSnapshot snapshot;
  snapshot.cycle = cycle;
  Shared::fillSnapshot(inventory, fs, poolCgroup, inventory.refresh(), snapshot);
  return snapshot;
}

}  // namespace vcpufold::hostd
