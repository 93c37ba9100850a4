#pragma once
// QmpInventory: VMs of QEMU run without libvirt (Proxmox-style). Declared in
// hostd.toml ([[vm]]) or found in a directory as NAME.qmp beside
// NAME.hint.sock (real sockets only, owned by root, hostd's user or the
// configured QEMU user). One QMP
// connection per VM, kept open: query-cpus-fast gives the vCPU threads (their
// schedstat is the sample), SO_PEERCRED the QEMU pid, and the events SHUTDOWN
// and VSERPORT_CHANGE are logged. A monitor that fails or goes mute is closed
// and retried with backoff (1 s doubling to 30 s) while the VM's vCPU threads
// are still sampled; a VM whose QEMU process has exited is gone.

#include <sys/types.h>

#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "vcpufold/common/rooted_fs.h"
#include "vcpufold/hostd/qmp_vm_config.h"
#include "vcpufold/hostd/inventory.h"
#include "vcpufold/hostd/qmp_client.h"

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
    std::unique_ptr<QmpClient> client;
    pid_t pid = 0;                  // the QEMU process, from the last connection
    std::vector<QmpVcpu> vcpus;     // from the last answer to query-cpus-fast
    std::int64_t retryAtNs = 0;     // no connection attempt before this
    std::int64_t retryBackoffNs = 0;
  };
  std::vector<QmpVmConfig> candidates();
  std::optional<std::string> refusedSocket(const std::string& path) const;
  void noteOnce(const std::string& name, const std::string& note);

  RootedFs fs_;
  std::string directory_;
  std::vector<QmpVmConfig> declared_;
  std::optional<uid_t> socketOwner_;
  std::map<std::string, Vm> vms_;
  std::vector<std::string> notes_;
  std::map<std::string, std::string> lastNotes_;  // the last problem noted per VM, so it is said once
};

}  // namespace vcpufold::hostd
