// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// agent.toml's keys on SIGHUP: the interval, sample period, fold default,
// log level, nice, fallback and metrics textfile take effect at once; the
// port, the actuator and the cpuset settings after a restart.

#include "vcpufold/agent/agent_config.h"
#include "vcpufold/common/config_reload.h"

namespace vcpufold::agent {

ReloadPlan<AgentConfig> planAgentReload(const AgentConfig& running, const AgentConfig& next);

}  // namespace vcpufold::agent
