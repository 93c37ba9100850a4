#pragma once
// QmpInventory: VMs of QEMU run without libvirt (Proxmox-style). Declared in
// hostd.toml ([[vm]]) or found in a directory as NAME.qmp beside
// NAME.hint.sock. One QMP connection per VM, kept open: query-cpus-fast gives
// the vCPU threads (their schedstat is the sample), SO_PEERCRED the QEMU pid,
// and the events SHUTDOWN and VSERPORT_CHANGE are logged; a VM whose QMP
// connection closes is gone.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "vcpufold/common/rooted_fs.h"
#include "vcpufold/hostd/hostd_config.h"
#include "vcpufold/hostd/inventory.h"
#include "vcpufold/hostd/qmp_client.h"

namespace vcpufold::hostd {

class QmpInventory final : public Inventory {
 public:
  QmpInventory(RootedFs fs, std::string directory, std::vector<QmpVmConfig> declared);
  [[nodiscard]] std::string describe() const override;
  Expected<std::vector<VmRecord>> refresh() override;
  Expected<std::map<std::string, VmSample>> sample() override;
  std::vector<std::string> takeNotes() override;

 private:
  struct Vm {
    QmpVmConfig config;
    std::unique_ptr<QmpClient> client;
    std::vector<QmpVcpu> vcpus;
  };
  std::vector<QmpVmConfig> candidates() const;

  RootedFs fs_;
  std::string directory_;
  std::vector<QmpVmConfig> declared_;
  std::map<std::string, Vm> vms_;
  std::vector<std::string> notes_;
};

}  // namespace vcpufold::hostd
