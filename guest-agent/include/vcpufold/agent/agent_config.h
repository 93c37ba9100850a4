// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// /etc/vcpufold/agent.toml, parsed into a plain struct and validated as a
// whole: every problem is reported at once, each naming its key. Unknown keys
// are errors (a typo must not silently fall back to a default).
// docs/guest-agent.md documents every key; packaging/agent.toml is the default file.

#include <cstdint>
#include <string>
#include <string_view>

#include "vcpufold/agent/kernel_class.h"
#include "vcpufold/common/expected.h"

namespace vcpufold::agent {

enum class ActuatorChoice { Auto, Kernel, Cpuset, None };

struct AgentConfig {
  // [agent]
  std::uint32_t intervalMs = 1000;  // status, fallback and lease checks; 100..100000
  std::uint32_t sampleMs =
      50;  // runnable-task sampling (/proc/loadavg) for demand; 10..interval_ms (unset: min(50, interval_ms))
  std::string port;                 // "" = find port_name in sysfs; a device path; or unix-listen:PATH
  std::string portName = "org.vcpufold.hint.0";
  ActuatorChoice actuator = ActuatorChoice::Auto;
  // Whether auto hints fold this guest: "by-evidence" where the bench shows
  // folding its kernel class gains (kernel_class.h), "always" on every class.
  FoldDefault foldDefault = FoldDefault::ByEvidence;
  std::string logLevel = "info";  // trace, debug, info, warn, error
  int nice = -10;                 // the agent's own nice value, set at start; -20..19
  // [fallback]
  bool fallbackEnabled = true;
  std::uint32_t highThresholdBp = 500;  // 1..9999
  std::uint32_t lowThresholdBp = 200;   // 0..high-1
  // [cpuset]
  bool moveRootTasks = true;
  // While folded, steer the guest's housekeeping (device IRQs, unbound
  // workqueues, unbound kernel threads through a parked partition of the
  // CPUs not preferred) onto the preferred CPUs (housekeeping_steering.h).
  bool steerHousekeeping = true;
  // [metrics]
  // A node_exporter textfile ("/var/lib/prometheus/node-exporter/vcpufold.prom"),
  // rewritten every interval; "" = none. Absolute, its name ending in .prom.
  std::string metricsTextfile;
  friend bool operator==(const AgentConfig&, const AgentConfig&) = default;
};

// Parses TOML text; source names it in errors ("/etc/vcpufold/agent.toml").
Expected<AgentConfig> parseAgentConfig(std::string_view text, const std::string& source);
// Checks ranges and relations; the error lists every problem, one per line.
Expected<void> validateAgentConfig(const AgentConfig& config);

const char* actuatorChoiceName(ActuatorChoice choice);

}  // namespace vcpufold::agent
