// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// QmpInventory: VMs of QEMU run without libvirt (Proxmox-style). Declared in
// hostd.toml ([[vm]]) or found in a directory as NAME.qmp beside
// NAME.hint.sock (real sockets only, owned by root, hostd's user or the
// configured QEMU user).
//
// QEMU's monitor serves one client per socket, and Proxmox's own tools (qm,
// pvestatd) use the same one: hostd connects, asks (query-name,
// query-cpus-fast) and disconnects, and only when it must: a VM seen for the
// first time, its QEMU process gone or replaced (a pid that no longer runs,
// or runs with another start time: a restart, or a reused pid), or every
// kRequery (vCPU hotplug). In between, the vCPU threads' schedstat under
// /proc is the sample, and the monitor is left to its other users. SO_PEERCRED
// gives the QEMU pid. A monitor that fails is asked again with backoff (1 s
// doubling to 30 s) while the VM's threads are still sampled; a VM whose QEMU
// process has exited and whose monitor does not answer is gone.

#include <sys/types.h>

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "vcpufold/common/rooted_fs.h"
#include "vcpufold/hostd/inventory.h"
#include "vcpufold/hostd/qmp_client.h"
#include "vcpufold/hostd/qmp_vm_config.h"

namespace vcpufold::hostd {

class QmpInventory final : public Inventory {
 public:
  // socketOwner: a uid whose sockets in the directory count, besides root and hostd's own.
  QmpInventory(RootedFs fs, std::string directory, std::vector<QmpVmConfig> declared,
               std::optional<uid_t> socketOwner = std::nullopt);
  [[nodiscard]] std::string describe() const override;
  Expected<std::vector<VmRecord>> refresh() override;
  Expected<std::map<std::string, VmSample>> sample() override;
  std::vector<std::string> takeNotes() override;

 private:
  struct Vm {
    QmpVmConfig config;
    pid_t pid = 0;                 // the QEMU process, from the last answer
    std::uint64_t startTicks = 0;  // its start time then: another one means another process
    std::vector<QmpVcpu> vcpus;    // from the last answer to query-cpus-fast
    std::int64_t queriedAtNs = 0;  // when the monitor last answered
    std::int64_t retryAtNs = 0;    // no connection attempt before this
    std::int64_t retryBackoffNs = 0;
  };
  std::vector<QmpVmConfig> candidates();
  // Whether the QEMU process last queried still runs (same pid, same start time).
  [[nodiscard]] bool stillRunning(const Vm& vm) const;
  // Whether QEMU's vCPU threads (by their names in /proc) differ from the last answer: a hot-plug or unplug.
  [[nodiscard]] bool vcpuThreadsChanged(const Vm& vm) const;
  [[nodiscard]] std::optional<std::uint64_t> startTicksOf(pid_t pid) const;
  // Connects, asks, disconnects; false when the monitor failed (backoff set).
  // Safe to run for different VMs at once (queryAll): notes go through notesMutex_.
  bool query(const std::string& name, Vm& vm, std::int64_t now);
  void queryAll(const std::vector<std::pair<std::string, Vm*>>& due, std::int64_t now);
  void addNote(std::string note);
  std::optional<std::string> refusedSocket(const std::string& path) const;
  void noteOnce(const std::string& name, const std::string& note);

  RootedFs fs_;
  std::string directory_;
  std::vector<QmpVmConfig> declared_;
  std::optional<uid_t> socketOwner_;
  std::map<std::string, Vm> vms_;
  std::vector<std::string> notes_;
  std::map<std::string, std::string> lastNotes_;  // the last problem noted per VM, so it is said once
  std::mutex notesMutex_;                         // notes_ and lastNotes_, while monitors are asked at once
};

}  // namespace vcpufold::hostd
