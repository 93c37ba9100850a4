// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/config_reload.h"

namespace vcpufold::hostd {
namespace {

const std::vector<ConfigKey<HostdConfig>>& hostdKeys() {
  static const std::vector<ConfigKey<HostdConfig>> keys = {
      reloadableKey("hostd.interval_ms", &HostdConfig::intervalMs),
      reloadableKey("hostd.reserve_cpus", &HostdConfig::reserveCpus),
      reloadableKey("hostd.unfold_delay_ms", &HostdConfig::unfoldDelayMs),
      reloadableKey("hostd.unfold_margin_cpus", &HostdConfig::unfoldMarginCpus),
      reloadableKey("hostd.ttl_ticks", &HostdConfig::ttlTicks),
      reloadableKey("hostd.missing_input_hold_ms", &HostdConfig::missingInputHoldMs),
      reloadableKey("hostd.log_level", &HostdConfig::logLevel),
      // Read by every decision: a new rule applies at the next tick.
      reloadableKey("[[rule]]", &HostdConfig::rules),
      // The inventory, its sockets and the servers are made at start.
      restartKey("inventory.backend", &HostdConfig::inventory),
      restartKey("inventory.libvirt_uri", &HostdConfig::libvirtUri),
      restartKey("inventory.qmp_directory", &HostdConfig::qmpDirectory),
      restartKey("inventory.qmp_socket_owner", &HostdConfig::qmpSocketOwner),
      restartKey("inventory.pool_cgroup", &HostdConfig::poolCgroup),
      restartKey("[[vm]]", &HostdConfig::qmpVms),
      restartKey("metrics.address", &HostdConfig::metricsAddress),
      restartKey("control.socket", &HostdConfig::controlSocket),
  };
  return keys;
}

}  // namespace

ReloadPlan<HostdConfig> planHostdReload(const HostdConfig& running, const HostdConfig& next) {
  return planReload(running, next, hostdKeys());
}

}  // namespace vcpufold::hostd
