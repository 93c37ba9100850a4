// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// /etc/vcpufold/hostd.toml, parsed into plain structs and validated as a
// whole (every problem reported at once, each naming its key; unknown keys
// are errors). docs/hostd.md documents every key; packaging/hostd/hostd.toml
// is the default file.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vcpufold/common/expected.h"
#include "vcpufold/common/system_paths.h"
#include "vcpufold/hostd/fleet_rule.h"
#include "vcpufold/hostd/qmp_vm_config.h"

namespace vcpufold::hostd {

enum class InventoryKind { Libvirt, Qmp };

struct HostdConfig {
  // [hostd]
  std::uint32_t intervalMs = 1000;            // the tick; 100..60000
  double reserveCpus = 0.0;                   // pCPUs kept from VMs; 0..pool
  std::uint32_t unfoldDelayMs = 1000;         // how long a larger hint must be asked for before unfolding; 0..600000
  double unfoldMarginCpus = 0.25;             // a share must clear the hint by this much to unfold; 0..4
  std::uint32_t ttlTicks = 3;                 // a hint's lease, in ticks; 2..100
  std::uint32_t missingInputHoldMs = 10'000;  // hints held while inputs are missing, then withdrawn; 0..600000
  std::string logLevel = "info";
  // [inventory]
  InventoryKind inventory = InventoryKind::Libvirt;
  std::string libvirtUri = "qemu:///system";
  std::string qmpDirectory;         // scan for NAME.qmp next to NAME.hint.sock ("" = off)
  std::string qmpSocketOwner;       // user whose sockets in qmpDirectory count, besides root and hostd's own
  std::vector<QmpVmConfig> qmpVms;  // [[vm]] tables
  std::vector<FleetRule> rules;     // [[rule]] tables, in order: default policies by name, flavor, partition
  std::string poolCgroup;           // the VMs' cgroup, relative to the cgroup root ("" = libvirt's machine cgroup)
  // [metrics]
  std::string metricsAddress = "127.0.0.1:9477";  // "" = off
  // [control]
  std::string controlSocket = paths::kHostdControlSocket;
  friend bool operator==(const HostdConfig&, const HostdConfig&) = default;
};

Expected<HostdConfig> parseHostdConfig(std::string_view text, const std::string& source);
Expected<void> validateHostdConfig(const HostdConfig& config);
const char* inventoryKindName(InventoryKind kind);
// The uid of a user name, from the password database.
std::optional<uid_t> uidOfUser(const std::string& name);

}  // namespace vcpufold::hostd
