// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// hostd.toml's keys on SIGHUP: the tick, lease, hysteresis, reserve, hold,
// log level and fleet rules take effect at once; the inventory, the [[vm]]
// tables, the metrics address and the control socket after a restart.

#include "vcpufold/common/config_reload.h"
#include "vcpufold/hostd/hostd_config.h"

namespace vcpufold::hostd {

ReloadPlan<HostdConfig> planHostdReload(const HostdConfig& running, const HostdConfig& next);

}  // namespace vcpufold::hostd
