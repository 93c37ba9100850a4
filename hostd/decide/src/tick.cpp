// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/tick.h"

#include "vcpufold/hostd/cpu_pools.h"

namespace vcpufold::hostd {

double effectiveWeight(const VmRecord& vm, bool cgroupV2) {
  if (vm.policy.weight) return *vm.policy.weight;
  if (vm.cgroupWeight && *vm.cgroupWeight > 0) return cgroupV2 ? *vm.cgroupWeight : *vm.cgroupWeight * 100.0 / 1024.0;
  return 100.0;
}

std::optional<std::string> missingInputsOf(const TickInputs& inputs) {
  std::vector<std::string> missing = inputs.missingInputs;
  // What follows from a failed read is not said again (a stale snapshot has
  // no samples of any VM).
  if (missing.empty() && inputs.poolCpus <= 0) missing.push_back("the VM CPU pool is empty or unknown");
  if (missing.empty())
    for (const VmRecord& vm : inputs.vms)
      if (!inputs.samples.count(vm.name)) missing.push_back("no vCPU sample of " + vm.name);
  if (missing.empty()) return std::nullopt;
  std::string text;
  constexpr std::size_t kShown = 3;  // a libvirt outage misses every VM: name a few
  for (std::size_t i = 0; i < std::min(missing.size(), kShown); ++i) text += (i ? "; " : "") + missing[i];
  if (missing.size() > kShown) text += "; and " + std::to_string(missing.size() - kShown) + " more";
  return text;
}

bool statusIsFresh(const ChannelSnapshot& channel, std::chrono::steady_clock::time_point now,
                   std::chrono::milliseconds statusMaxAge) {
  if (!channel.cooperative || !channel.lastStatus) return false;
  const auto ownLimit = std::chrono::milliseconds(2 * static_cast<std::int64_t>(channel.lastStatus->intervalMs));
  return now - channel.lastStatusAt <= std::min(ownLimit, statusMaxAge);
}

protocol::Hint wireHint(std::uint32_t vcpus, FoldMode mode, std::uint32_t ttlMs, const std::string& reason) {
  // A short reason keeps every hint frame far below the protocol's frame limit.
  constexpr std::size_t kMaxReasonBytes = 256;
  const protocol::HintPolicy policy = mode == FoldMode::Off     ? protocol::HintPolicy::Off
                                      : mode == FoldMode::Fixed ? protocol::HintPolicy::Fixed
                                                                : protocol::HintPolicy::Auto;
  return protocol::Hint{0, vcpus, ttlMs, policy, reason.substr(0, kMaxReasonBytes)};
}

namespace {

// The VM pool's pCPUs: as read, else (inputs built by hand) 0..poolCpus-1.
protocol::CpuSet vmPoolOf(const TickInputs& inputs) {
  if (!inputs.poolCpuSet.empty() || inputs.poolCpus < 1) return inputs.poolCpuSet;
  return protocol::CpuSet::range(0, static_cast<unsigned>(inputs.poolCpus) - 1);
}

// The pools of the VMs as placed.
PoolLayout layoutOf(const TickInputs& inputs) { return layoutPools(vmPoolOf(inputs), inputs.isolatedCpus, inputs.vms); }

// This tick's load on the pools: per-pCPU busy time (else the pool's), each
// VM's run time, the reserve and last tick's non-VM load.
PoolLoad loadOf(const TickInputs& inputs, const TickReport& report) {
  PoolLoad load;
  load.cpuBusy = inputs.cpuBusy;
  if (load.cpuBusy.empty()) load.poolBusyCpus = inputs.hostBusyCpus;
  for (const VmReport& row : report.vms) load.vmRunCpus.push_back(row.load ? row.load->runCpus : 0.0);
  load.reserveCpus = inputs.reserveCpus;
  load.previousNonVmCpus = inputs.previousNonVmCpus;
  return load;
}

// Missing inputs: the hints in force stay (and are renewed) for the hold, then
// every hint stops. Nothing is decided from what is left.
void holdOrWithdraw(const TickInputs& inputs, const std::string& missing, TickReport& report,
                    const std::map<std::string, HintState>& hintState) {
  const auto lasted = inputs.now - inputs.inputsMissingSince.value_or(inputs.now);
  const auto lastedMs = std::chrono::duration_cast<std::chrono::milliseconds>(lasted).count();
  report.inputsMissing = missing;
  report.hintsWithdrawn = lasted > inputs.missingInputHold;
  std::map<std::string, HintState> next;
  for (auto& row : report.vms) {
    row.allocation.name = row.record.name;
    const auto held = hintState.find(row.record.name);
    if (report.hintsWithdrawn) {
      row.allocation.reason = "inputs missing for " + std::to_string(lastedMs) + " ms (" + missing +
                              "): hints stopped; the lease lapses and the guest unfolds or falls back";
    } else if (held != hintState.end()) {
      row.allocation.hint = held->second.hint;
      row.allocation.state = HintState{held->second.hint, 0, std::nullopt};
      next[row.record.name] = row.allocation.state;
      row.allocation.reason = "inputs missing (" + missing + "): holding " + std::to_string(held->second.hint) +
                              " vCPUs for up to " + std::to_string(inputs.missingInputHold.count()) + " ms";
    } else {
      row.allocation.reason = "inputs missing (" + missing + "): not hinted";
    }
  }
  report.hintState = std::move(next);
}

// Every hinted VM's finished hint, in one place for both kinds of decision.
void finishHints(const TickInputs& inputs, TickReport& report) {
  for (auto& row : report.vms)
    if (row.allocation.hint)
      row.hint = wireHint(*row.allocation.hint, row.record.policy.mode, inputs.hintTtlMs, row.allocation.reason);
}

}  // namespace

TickReport decideTick(const AllocationConfig& config, const TickInputs& inputs,
                      const std::map<std::string, HintState>& hintState, std::uint64_t tick) {
  TickReport report;
  report.tick = tick;
  report.poolCpus = inputs.poolCpus;
  report.poolSource = inputs.poolSource;
  report.reserveCpus = inputs.reserveCpus;

  std::vector<VmDemand> demands;
  demands.reserve(inputs.vms.size());
  report.vms.reserve(inputs.vms.size());
  for (const VmRecord& vm : inputs.vms) {
    VmReport row;
    row.record = vm;
    row.weight = effectiveWeight(vm, inputs.cgroupV2);
    if (const auto channel = inputs.channels.find(vm.name); channel != inputs.channels.end())
      row.channel = channel->second;
    const auto now = inputs.samples.find(vm.name);
    const auto before = inputs.previousSamples.find(vm.name);
    if (now != inputs.samples.end() && before != inputs.previousSamples.end())
      row.load = deriveLoad(before->second, now->second);
    if (row.load) report.vmRunCpus += row.load->runCpus;

    VmDemand demand;
    demand.name = vm.name;
    demand.vcpus = std::max<std::uint32_t>(vm.vcpus, 1);
    demand.observedDemand = row.load ? row.load->demandCpus : 0.0;
    // A guest's word counts only while it is fresh and the guest cooperates;
    // allocate() caps it at the VM's vCPUs.
    row.statusFresh = statusIsFresh(row.channel, inputs.now, inputs.statusMaxAge);
    if (row.statusFresh) {
      demand.reportedDemand = row.channel.lastStatus->demand;
      // The guest's demand moved after the samples' window began.
      demand.reportIsNewer = inputs.windowStartedAt && row.channel.lastDemandChangeAt > *inputs.windowStartedAt;
    }
    demand.weight = row.weight;
    demand.policy = vm.policy;
    demand.cooperative = row.channel.cooperative;
    demand.reachable = row.channel.state == ChannelState::Ready && row.channel.agentHello.has_value();
    if (row.channel.agentHello && row.channel.agentHello->agent) {
      const protocol::AgentInfo& agent = *row.channel.agentHello->agent;
      demand.threadsPerCore = agent.threadsPerCore;
      if (!agent.foldsOnAutoHints) demand.autoFoldDeclinedClass = agent.kernelClass.value_or("unknown");
    }
    demands.push_back(demand);
    report.vms.push_back(std::move(row));
  }
  report.hostBusyCpus = inputs.hostBusyCpus.value_or(report.vmRunCpus);
  report.isolatedCpus = inputs.isolatedCpus;
  const PoolLayout layout = layoutOf(inputs);
  const std::vector<PoolCapacity> capacities = poolCapacities(layout, loadOf(inputs, report));
  for (std::size_t p = 0; p < layout.pools.size(); ++p) {
    const CpuPool& pool = layout.pools[p];
    const PoolCapacity& capacity = capacities[p];
    PoolReport out{pool.name,
                   pool.cpus.size(),
                   pool.vms.size(),
                   0,
                   capacity.busyCpus,
                   capacity.vmRunCpus,
                   capacity.measuredNonVmCpus,
                   capacity.nonVmCpus,
                   capacity.reserveCpus,
                   capacity.capacity};
    for (std::size_t vm : pool.vms) out.dedicatedVms += layout.dedicated[vm] ? 1U : 0U;
    report.measuredNonVmCpus += out.measuredNonVmCpus;
    report.nonVmCpus += out.nonVmCpus;
    report.capacity += out.capacity;
    report.pools.push_back(std::move(out));
  }
  for (std::size_t vm = 0; vm < report.vms.size(); ++vm) report.vms[vm].pool = layout.pools[layout.poolOfVm[vm]].name;
  if (const auto missing = missingInputsOf(inputs)) {
    holdOrWithdraw(inputs, *missing, report, hintState);
    finishHints(inputs, report);
    return report;
  }

  const Allocation allocation = allocate(config, layout, capacities, demands, hintState, inputs.now);
  report.totalDemand = allocation.totalDemand;
  report.contention = allocation.contention;
  for (std::size_t p = 0; p < allocation.pools.size(); ++p) {
    report.pools[p].demand = allocation.pools[p].demand;
    report.pools[p].contention = allocation.pools[p].contention;
  }
  for (std::size_t i = 0; i < allocation.vms.size(); ++i) {
    report.vms[i].allocation = allocation.vms[i];
    if (allocation.vms[i].hint) report.hintState[allocation.vms[i].name] = allocation.vms[i].state;
  }
  finishHints(inputs, report);
  return report;
}

}  // namespace vcpufold::hostd
