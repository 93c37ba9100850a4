// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/metrics_textfile.h"

#include "vcpufold/common/prometheus_text.h"

namespace vcpufold::agent {

std::string formatMetricsTextfile(const AgentMetricsSnapshot& snapshot) {
  PrometheusText w;
  w.family("vcpufold_agent_info", "gauge", "The running vcpufold-agent: its version and actuator.");
  w.sample("vcpufold_agent_info",
           "version=\"" + prometheusLabelValue(snapshot.version) + "\",actuator=\"" +
               protocol::actuatorName(snapshot.actuator) + "\"",
           1);
  w.family("vcpufold_agent_folds_on_auto_hints", "gauge",
           "1 when the host's auto hints fold this guest; 0 when its kernel class (labelled) or platform is not "
           "folded by default (docs/guest-agent.md).");
  w.sample("vcpufold_agent_folds_on_auto_hints", "kernel_class=\"" + prometheusLabelValue(snapshot.kernelClass) + "\"",
           snapshot.foldsOnAutoHints ? 1 : 0);
  w.family("vcpufold_agent_running", "gauge", "1 while the agent runs; 0 written as it stops (the guest unfolded).");
  w.sample("vcpufold_agent_running", "", snapshot.running ? 1 : 0);
  w.family("vcpufold_agent_online_cpus", "gauge", "Online CPUs of the guest.");
  w.sample("vcpufold_agent_online_cpus", "", static_cast<double>(snapshot.online.size()));
  w.family("vcpufold_agent_preferred_cpus", "gauge", "CPUs the guest's work is folded onto (all online: unfolded).");
  w.sample("vcpufold_agent_preferred_cpus", "", static_cast<double>(snapshot.preferred.size()));
  // One series per online CPU rather than a CPU-list label: a label that
  // changes with every fold would start a new series each time.
  w.family("vcpufold_agent_cpu_preferred", "gauge", "1 when this online CPU is preferred, 0 when work is kept off it.");
  for (unsigned cpu : snapshot.online.toVector())
    w.sample("vcpufold_agent_cpu_preferred", "cpu=\"" + std::to_string(cpu) + "\"",
             snapshot.preferred.contains(cpu) ? 1 : 0);
  w.family("vcpufold_agent_control", "gauge",
           "Who decides the preferred CPUs: host (a hint's lease), fallback (steal time) or none (unfolded).");
  for (auto control : {protocol::Control::Host, protocol::Control::Fallback, protocol::Control::None})
    w.sample("vcpufold_agent_control", std::string("control=\"") + protocol::controlName(control) + "\"",
             snapshot.control == control ? 1 : 0);
  w.family("vcpufold_agent_host_connected", "gauge", "1 while the host's side of the virtio port is open.");
  w.sample("vcpufold_agent_host_connected", "", snapshot.hostConnected ? 1 : 0);
  // Absent until the first hint: a made-up seq or age would read as a real one.
  if (snapshot.lastHintSeq) {
    w.family("vcpufold_agent_last_hint_seq", "gauge", "Sequence number of the last hint received.");
    w.sample("vcpufold_agent_last_hint_seq", "", static_cast<double>(*snapshot.lastHintSeq));
  }
  if (snapshot.lastHintAgeSeconds) {
    w.family("vcpufold_agent_last_hint_age_seconds", "gauge", "Seconds since the last hint arrived, when written.");
    w.sample("vcpufold_agent_last_hint_age_seconds", "", *snapshot.lastHintAgeSeconds);
  }
  w.family("vcpufold_agent_steal_ratio", "gauge", "Share of the last interval's CPU time stolen by the host (0..1).");
  w.sample("vcpufold_agent_steal_ratio", "", snapshot.stealBp / 10000.0);
  w.family("vcpufold_agent_demand_tasks", "gauge",
           "Runnable tasks, averaged over the last interval (/proc/loadavg running count).");
  w.sample("vcpufold_agent_demand_tasks", "", snapshot.demandTasks);
  return w.take();
}

}  // namespace vcpufold::agent
