// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/config_reload.h"

namespace vcpufold::agent {
namespace {

const std::vector<ConfigKey<AgentConfig>>& agentKeys() {
  static const std::vector<ConfigKey<AgentConfig>> keys = {
      reloadableKey("agent.interval_ms", &AgentConfig::intervalMs),
      reloadableKey("agent.sample_ms", &AgentConfig::sampleMs),
      reloadableKey("agent.fold", &AgentConfig::foldDefault),
      reloadableKey("agent.log_level", &AgentConfig::logLevel),
      reloadableKey("agent.nice", &AgentConfig::nice),
      reloadableKey("fallback.enabled", &AgentConfig::fallbackEnabled),
      reloadableKey("fallback.high_threshold", &AgentConfig::highThresholdBp),
      reloadableKey("fallback.low_threshold", &AgentConfig::lowThresholdBp),
      reloadableKey("metrics.textfile", &AgentConfig::metricsTextfile),
      // The channel and the actuator are opened and chosen at start.
      restartKey("agent.port", &AgentConfig::port),
      restartKey("agent.port_name", &AgentConfig::portName),
      restartKey("agent.actuator", &AgentConfig::actuator),
      restartKey("cpuset.move_root_tasks", &AgentConfig::moveRootTasks),
      restartKey("cpuset.steer_housekeeping", &AgentConfig::steerHousekeeping),
  };
  return keys;
}

}  // namespace

ReloadPlan<AgentConfig> planAgentReload(const AgentConfig& running, const AgentConfig& next) {
  return planReload(running, next, agentKeys());
}

}  // namespace vcpufold::agent
