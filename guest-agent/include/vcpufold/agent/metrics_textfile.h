// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The agent's state as a node_exporter textfile ([metrics] textfile): what is
// preferred, who decides it, the last hint and what the agent measures. The
// file is rewritten every interval and, with running 0 and every CPU
// preferred, when the agent stops. docs/guest-agent.md lists the metrics.

#include <cstdint>
#include <optional>
#include <string>

#include "vcpufold/protocol/cpu_set.h"
#include "vcpufold/protocol/messages.h"

namespace vcpufold::agent {

struct AgentMetricsSnapshot {
  bool running = true;
  std::string version;
  protocol::Actuator actuator = protocol::Actuator::None;
  std::string kernelClass = "unknown";  // kernel_class.h
  bool foldsOnAutoHints = true;         // false: the class (or the platform) is not folded on auto hints
  protocol::CpuSet online;
  protocol::CpuSet preferred;
  protocol::Control control = protocol::Control::None;
  bool hostConnected = false;
  std::optional<std::uint64_t> lastHintSeq;  // none until a hint has arrived
  std::optional<double> lastHintAgeSeconds;
  std::uint32_t stealBp = 0;  // the last interval's steal, basis points
  double demandTasks = 0;     // runnable tasks, averaged over the last interval
};

// The file's text, in Prometheus's text exposition format.
std::string formatMetricsTextfile(const AgentMetricsSnapshot& snapshot);

}  // namespace vcpufold::agent
