// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// InventoryWorker: everything hostd reads from the host that can block (the
// inventory backend's libvirt or QMP calls, vCPU samples, the CPU pool and
// /proc/stat) runs on a thread of its own, once per period. Each cycle ends in
// one HostSnapshot handed to the owner's callback; a hung libvirtd or QEMU
// monitor only makes snapshots late, and the channels, metrics and status on
// the control thread go on. The owner decides what a late snapshot means.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vcpufold/common/proc_stat.h"
#include "vcpufold/common/rooted_fs.h"
#include "vcpufold/hostd/cpu_pool.h"
#include "vcpufold/hostd/host_snapshot.h"
#include "vcpufold/hostd/inventory.h"

namespace vcpufold::hostd {

class InventoryWorker {
 public:
  using SnapshotHandler = std::function<void(HostSnapshot)>;

  // onSnapshot runs on the worker thread: hand the snapshot over (asio::post).
  // poolCgroup: inventory.pool_cgroup (see readVmCpuPool).
  InventoryWorker(std::unique_ptr<Inventory> inventory, RootedFs fs, std::string poolCgroup,
                  std::chrono::milliseconds period, SnapshotHandler onSnapshot);
  ~InventoryWorker();
  InventoryWorker(const InventoryWorker&) = delete;
  InventoryWorker& operator=(const InventoryWorker&) = delete;

  void start();
  // Asks the thread to stop and waits up to `patience`; false when it is still
  // inside a call that does not return (the caller then exits without it).
  bool stop(std::chrono::milliseconds patience);
  void setPeriod(std::chrono::milliseconds period);

  // Measures `vm`'s vCPU load over `window` starting now: two samples of it,
  // taken on the worker thread between its cycles. `done` runs on the worker
  // thread with the load, or none when the VM could not be sampled (hand it
  // over, as with snapshots). A request for a VM already waiting is dropped.
  using LoadHandler = std::function<void(const std::string& vm, std::optional<VmLoad> load)>;
  void measureNow(const std::string& vm, std::chrono::milliseconds window, LoadHandler done);

  // What the thread is doing and since when (for logs when snapshots are late).
  struct Activity {
    std::string step;
    std::chrono::steady_clock::time_point since{};
  };
  [[nodiscard]] Activity activity() const;
  [[nodiscard]] std::string describe() const { return description_; }

  // One cycle on the caller's thread (--oneshot and tests).
  static HostSnapshot readOnce(Inventory& inventory, const RootedFs& fs, const std::string& poolCgroup,
                               std::uint64_t cycle);

 private:
  struct Shared;
  std::string description_;
  std::shared_ptr<Shared> shared_;
};

}  // namespace vcpufold::hostd
