// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/metrics.h"

#include "vcpufold/common/number_text.h"
#include "vcpufold/common/prometheus_text.h"
#include "vcpufold/protocol/cpulist.h"

namespace vcpufold::hostd {

void TickDurationHistogram::observe(double seconds) {
  ++count;
  sum += seconds;
  for (std::size_t i = 0; i < std::size(kTickDurationBuckets); ++i)
    if (seconds <= kTickDurationBuckets[i]) ++bucketCounts[i];
}

std::string renderMetrics(const TickReport& report, const TickDurationHistogram& tickDuration,
                          const DaemonCounters& counters, const DaemonFacts& facts) {
  PrometheusText w;
  w.family("vcpufold_build_info", "gauge", "1, labelled with the running hostd's version.");
  w.sample("vcpufold_build_info", "version=\"" + prometheusLabelValue(facts.version) + "\"", 1);
  w.family("process_start_time_seconds", "gauge", "When hostd started, in seconds since the Unix epoch.");
  w.sample("process_start_time_seconds", "", facts.startTimeSeconds);
  w.family("vcpufold_tick_interval_seconds", "gauge", "The tick in force (hostd.interval_ms).");
  w.sample("vcpufold_tick_interval_seconds", "", facts.tickIntervalSeconds);
  w.family("vcpufold_config_last_reload_successful", "gauge",
           "0 when the last SIGHUP's configuration was refused (the one before it runs on); 1 otherwise.");
  w.sample("vcpufold_config_last_reload_successful", "", facts.lastReloadSuccessful ? 1 : 0);
  w.family("vcpufold_config_last_reload_success_timestamp_seconds", "gauge",
           "When the configuration in force was taken (start or reload), in seconds since the Unix epoch.");
  w.sample("vcpufold_config_last_reload_success_timestamp_seconds", "", facts.lastReloadSuccessTimeSeconds);
  w.family("vcpufold_tick_inputs_complete", "gauge",
           "1 when the last decision had every input; 0 when hints were held or withdrawn.");
  w.sample("vcpufold_tick_inputs_complete", "", report.inputsMissing ? 0 : 1);
  w.family("vcpufold_tick_inputs_missing_total", "counter",
           "Decisions taken with an input missing (pool, host CPU time, a VM's samples, the inventory).");
  w.sample("vcpufold_tick_inputs_missing_total", "", static_cast<double>(counters.inputsMissingTotal));
  w.family("vcpufold_hints_withdrawn", "gauge", "1 when inputs have been missing past the hold and no VM is hinted.");
  w.sample("vcpufold_hints_withdrawn", "", report.hintsWithdrawn ? 1 : 0);
  w.family("vcpufold_hints_withdrawn_total", "counter",
           "Decisions that withdrew every hint (inputs missing too long).");
  w.sample("vcpufold_hints_withdrawn_total", "", static_cast<double>(counters.hintsWithdrawnTotal));
  w.family("vcpufold_inventory_snapshot_age_seconds", "gauge", "Age of the newest inventory and sample snapshot.");
  w.sample("vcpufold_inventory_snapshot_age_seconds", "", counters.snapshotAgeSeconds);
  w.family("vcpufold_inventory_snapshots_late_total", "counter", "Ticks that found the inventory snapshot too old.");
  w.sample("vcpufold_inventory_snapshots_late_total", "", static_cast<double>(counters.snapshotsLateTotal));
  w.family("vcpufold_event_decisions_total", "counter",
           "Decisions between ticks, on the last samples: a changed demand report, or an unfold falling due.");
  w.sample("vcpufold_event_decisions_total", "", static_cast<double>(counters.eventDecisionsTotal));
  w.family("vcpufold_event_decisions_refused_total", "counter",
           "Changed demand reports that called for a decision past their VM's budget (20 per 10 s): left to the tick.");
  w.sample("vcpufold_event_decisions_refused_total", "", static_cast<double>(counters.eventDecisionsRefusedTotal));
  w.family("vcpufold_metrics_connections_evicted_total", "counter",
           "Metrics clients closed early to keep within the connection cap.");
  w.sample("vcpufold_metrics_connections_evicted_total", "", static_cast<double>(counters.metricsConnectionsEvicted));
  w.family("vcpufold_metrics_accept_errors_total", "counter", "Failed accepts on the metrics port (e.g. EMFILE).");
  w.sample("vcpufold_metrics_accept_errors_total", "", static_cast<double>(counters.metricsAcceptErrors));
  w.family("vcpufold_text_pages_rendered_total", "counter",
           "Metrics pages and status tables rendered: at most one of each per decision, whatever the requests.");
  w.sample("vcpufold_text_pages_rendered_total", "", static_cast<double>(counters.textPagesRendered));
  w.family("vcpufold_host_vm_cpus", "gauge", "pCPUs VMs may run on (the machine cgroup's cpuset).");
  w.sample("vcpufold_host_vm_cpus", "", report.poolCpus);
  w.family("vcpufold_host_isolated_cpus", "gauge", "pCPUs in isolcpus or nohz_full: not VM capacity.");
  w.sample("vcpufold_host_isolated_cpus", "", static_cast<double>(report.isolatedCpus.size()));
  // One series per pool: pCPUs that VMs pinned apart use, named by its CPU list.
  struct PerPool {
    const char* name;
    const char* help;
    double (*value)(const PoolReport&);
  };
  const PerPool poolFamilies[] = {
      {"vcpufold_pool_cpus", "pCPUs of the pool.", [](const PoolReport& p) { return static_cast<double>(p.cpus); }},
      {"vcpufold_pool_vms", "VMs in the pool.", [](const PoolReport& p) { return static_cast<double>(p.vms); }},
      {"vcpufold_pool_dedicated_vms", "VMs of the pool pinned 1:1 to pCPUs of their own (never folded).",
       [](const PoolReport& p) { return static_cast<double>(p.dedicatedVms); }},
      {"vcpufold_pool_non_vm_cpus", "Non-VM load the pool's capacity counts, in CPUs.",
       [](const PoolReport& p) { return p.nonVmCpus; }},
      {"vcpufold_pool_capacity_cpus", "The pool's pCPUs left for VMs after the reserve and non-VM load.",
       [](const PoolReport& p) { return p.capacity; }},
      {"vcpufold_pool_demand_cpus", "The pool's VMs' demand together, in CPUs.",
       [](const PoolReport& p) { return p.demand; }},
      {"vcpufold_pool_contention", "1 when the pool's VMs' demand exceeds its capacity.",
       [](const PoolReport& p) { return p.contention ? 1.0 : 0.0; }},
      {"vcpufold_pool_inputs_complete",
       "0 when a VM of the pool had no vCPU sample and the pool's hints were held or withdrawn, not decided.",
       [](const PoolReport& p) { return p.inputsMissing ? 0.0 : 1.0; }},
      {"vcpufold_pool_hints_withdrawn", "1 while a VM of the pool has had no sample past the hold: no VM of it hinted.",
       [](const PoolReport& p) { return p.hintsWithdrawn ? 1.0 : 0.0; }},
  };
  for (const auto& family : poolFamilies) {
    w.family(family.name, "gauge", family.help);
    for (const PoolReport& pool : report.pools)
      w.sample(family.name, "pool=\"" + prometheusLabelValue(pool.name) + "\"", family.value(pool));
  }
  w.family("vcpufold_capacity_cpus", "gauge", "pCPUs left for VMs after the reserve and non-VM load, all pools.");
  w.sample("vcpufold_capacity_cpus", "", report.capacity);
  // Not "_sum": Prometheus reads that suffix as part of a summary or histogram.
  w.family("vcpufold_demand_cpus", "gauge", "All VMs' demand together, in CPUs.");
  w.sample("vcpufold_demand_cpus", "", report.totalDemand);
  w.family("vcpufold_contention", "gauge", "1 when some pool's VMs' demand exceeds its capacity.");
  w.sample("vcpufold_contention", "", report.contention ? 1 : 0);
  w.family("vcpufold_ticks_total", "counter", "Ticks run.");
  w.sample("vcpufold_ticks_total", "", static_cast<double>(report.tick));

  w.family("vcpufold_tick_duration_seconds", "histogram", "CPU-side duration of one tick.");
  for (std::size_t i = 0; i < std::size(kTickDurationBuckets); ++i)
    w.sample("vcpufold_tick_duration_seconds_bucket", "le=\"" + metricNumber(kTickDurationBuckets[i]) + "\"",
             static_cast<double>(tickDuration.bucketCounts[i]));
  w.sample("vcpufold_tick_duration_seconds_bucket", "le=\"+Inf\"", static_cast<double>(tickDuration.count));
  w.sample("vcpufold_tick_duration_seconds_sum", "", tickDuration.sum);
  w.sample("vcpufold_tick_duration_seconds_count", "", static_cast<double>(tickDuration.count));

  struct PerVm {
    const char* name;
    const char* type;
    const char* help;
  };
  const PerVm families[] = {
      {"vcpufold_vm_vcpus", "gauge", "vCPUs of the VM."},
      {"vcpufold_vm_pool_info", "gauge", "1, labelled with the pool the VM's vCPUs may run in."},
      {"vcpufold_vm_demand_cpus", "gauge", "The VM's demand as allocation used it, in CPUs."},
      {"vcpufold_vm_overhead_cpus", "gauge",
       "CPUs the VM's QEMU spent outside its vCPUs (emulator, I/O threads, vhost), counted as its own load."},
      {"vcpufold_vm_reported_demand_discounted", "gauge",
       "1 when the agent reported more demand than the host sees the VM use, and the report was not counted."},
      {"vcpufold_vm_delay_ratio", "gauge", "Share of the vCPUs' wanting-to-run time spent waiting for a pCPU."},
      {"vcpufold_vm_run_cpus", "gauge", "CPUs the VM's vCPUs ran on average this tick."},
      {"vcpufold_vm_share_cpus", "gauge", "The VM's fair share of the capacity, in CPUs."},
      {"vcpufold_vm_hint_vcpus", "gauge", "vCPUs the VM is hinted to keep preferred (absent: not hinted)."},
      {"vcpufold_vm_applied_cpus", "gauge", "CPUs the agent reports applied for the last acknowledged hint."},
      {"vcpufold_vm_weight", "gauge", "The VM's weight on the cpu.weight scale."},
      {"vcpufold_vm_agent_cooperative", "gauge", "1 when an agent is connected and acknowledges hints."},
      {"vcpufold_vm_agent_state", "gauge",
       "1 for the VM's agent state: no_channel, no_agent (a port, no agent hello), not_acknowledging, penalised, "
       "cooperative; 0 for the others."},
      {"vcpufold_vm_agent_folds_on_auto_hints", "gauge",
       "1 when the VM's agent folds on auto hints; 0 when it declines for its guest kernel class (labelled; "
       "absent: no agent hello)."},
      {"vcpufold_vm_agent_steal_ratio", "gauge", "Steal the agent reports, as a ratio."},
      {"vcpufold_vm_protocol_errors_total", "counter", "Frames from the guest that were refused."},
      {"vcpufold_vm_channel_connects_total", "counter", "Connections made to the VM's channel."},
      {"vcpufold_vm_channel_penalties_total", "counter", "Disconnections for exceeding the error budget."},
      {"vcpufold_vm_hints_sent_total", "counter", "Hints sent (one per tick while hinted)."},
      {"vcpufold_vm_agent_errors_total", "counter", "Error frames the guest's agent sent."},
      {"vcpufold_vm_agent_status_fresh", "gauge",
       "1 when the agent's last status counts (recent, from an agent that acknowledges hints)."},
      {"vcpufold_vm_log_lines_suppressed_total", "counter",
       "Log lines the guest caused beyond its budget, not written."},
  };
  for (const auto& family : families) {
    w.family(family.name, family.type, family.help);
    for (const auto& vm : report.vms) {
      const std::string labels = "vm=\"" + prometheusLabelValue(vm.record.name) + "\"";
      const std::string name = family.name;
      const auto& channel = vm.channel;
      if (name == "vcpufold_vm_vcpus") w.sample(name, labels, vm.record.vcpus);
      if (name == "vcpufold_vm_pool_info" && !vm.pool.empty())
        w.sample(name,
                 labels + ",pool=\"" + prometheusLabelValue(vm.pool) + "\",dedicated=\"" +
                     (vm.allocation.dedicated ? "true" : "false") + "\"",
                 1);
      if (name == "vcpufold_vm_demand_cpus") w.sample(name, labels, vm.allocation.demand);
      if (name == "vcpufold_vm_overhead_cpus") w.sample(name, labels, vm.allocation.overhead);
      if (name == "vcpufold_vm_reported_demand_discounted") w.sample(name, labels, vm.allocation.reportDiscounted ? 1 : 0);
      if (name == "vcpufold_vm_delay_ratio" && vm.load) w.sample(name, labels, vm.load->delayRatio);
      if (name == "vcpufold_vm_run_cpus" && vm.load) w.sample(name, labels, vm.load->runCpus);
      if (name == "vcpufold_vm_share_cpus") w.sample(name, labels, vm.allocation.share);
      if (name == "vcpufold_vm_hint_vcpus" && vm.allocation.hint) w.sample(name, labels, *vm.allocation.hint);
      if (name == "vcpufold_vm_applied_cpus" && channel.lastAck)
        w.sample(name, labels, static_cast<double>(channel.lastAck->applied.size()));
      if (name == "vcpufold_vm_weight") w.sample(name, labels, vm.weight);
      if (name == "vcpufold_vm_agent_cooperative") w.sample(name, labels, channel.cooperative ? 1 : 0);
      if (name == "vcpufold_vm_agent_state") {
        const std::string state = agentStateName(vm);
        for (const char* each : kAgentStates)
          w.sample(name, labels + ",state=\"" + each + "\"", state == each ? 1 : 0);
      }
      if (name == "vcpufold_vm_agent_folds_on_auto_hints" && channel.agentHello && channel.agentHello->agent) {
        const auto& agent = *channel.agentHello->agent;
        w.sample(name, labels + ",kernel_class=\"" + prometheusLabelValue(agent.kernelClass.value_or("unknown")) + "\"",
                 agent.foldsOnAutoHints ? 1 : 0);
      }
      if (name == "vcpufold_vm_agent_steal_ratio" && channel.lastStatus)
        w.sample(name, labels, channel.lastStatus->stealBp / 10000.0);
      if (name == "vcpufold_vm_protocol_errors_total")
        w.sample(name, labels, static_cast<double>(channel.protocolErrors));
      if (name == "vcpufold_vm_channel_connects_total") w.sample(name, labels, static_cast<double>(channel.connects));
      if (name == "vcpufold_vm_channel_penalties_total") w.sample(name, labels, static_cast<double>(channel.penalties));
      if (name == "vcpufold_vm_hints_sent_total") w.sample(name, labels, static_cast<double>(channel.hintsSent));
      if (name == "vcpufold_vm_agent_status_fresh") w.sample(name, labels, vm.statusFresh ? 1 : 0);
      if (name == "vcpufold_vm_agent_errors_total") w.sample(name, labels, static_cast<double>(channel.agentErrors));
      if (name == "vcpufold_vm_log_lines_suppressed_total")
        w.sample(name, labels, static_cast<double>(channel.logLinesSuppressed));
    }
  }
  return w.take();
}

}  // namespace vcpufold::hostd
