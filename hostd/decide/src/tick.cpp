// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/tick.h"

#include <algorithm>

#include "vcpufold/common/log_text.h"
#include "vcpufold/hostd/cpu_pools.h"

namespace vcpufold::hostd {

double effectiveWeight(const VmRecord& vm, bool cgroupV2) {
  if (vm.policy.weight) return *vm.policy.weight;
  if (vm.cgroupWeight && *vm.cgroupWeight > 0) return cgroupV2 ? *vm.cgroupWeight : *vm.cgroupWeight * 100.0 / 1024.0;
  return 100.0;
}

namespace {

std::optional<std::string> joined(const std::vector<std::string>& missing) {
  if (missing.empty()) return std::nullopt;
  std::string text;
  constexpr std::size_t kShown = 3;  // a libvirt outage misses every VM: name a few
  for (std::size_t i = 0; i < std::min(missing.size(), kShown); ++i) text += (i ? "; " : "") + missing[i];
  if (missing.size() > kShown) text += "; and " + std::to_string(missing.size() - kShown) + " more";
  return text;
}

}  // namespace

std::optional<std::string> missingInputsOf(const TickInputs& inputs) {
  std::vector<std::string> missing = inputs.missingInputs;
  // What follows from a failed read is not said again (a stale snapshot has
  // no samples of any VM).
  if (missing.empty() && inputs.poolCpus <= 0) missing.push_back("the VM CPU pool is empty or unknown");
  return joined(missing);
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
  // Escaped and cut between whole characters: any text hostd put in a reason
  // (a VM's name, a pool's) still encodes, so no hint is lost to its reason.
  std::string text = escapeWithin(reason, kMaxReasonBytes);
  if (text.empty()) text = "-";
  return protocol::Hint{0, vcpus, ttlMs, policy, std::move(text)};
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
  // A VM's run time is every thread of its QEMU: its emulator and I/O
  // threads are its load, not the pool's (which every VM would pay for).
  for (const VmReport& row : report.vms)
    load.vmRunCpus.push_back(row.load ? row.load->runCpus + row.load->otherRunCpus : 0.0);
  load.reserveCpus = inputs.reserveCpus;
  load.previousNonVmCpus = inputs.previousNonVmCpus;
  return load;
}

// Missing inputs: the hints in force stay (and are renewed) for the hold, then
// they stop. Nothing is decided for the VM from what is left.
void holdOrWithdrawRow(VmReport& row, const std::string& missing, std::chrono::steady_clock::duration lasted,
                       bool withdrawn, const TickInputs& inputs, const HintStates& hintState, HintStates& next) {
  const auto lastedMs = std::chrono::duration_cast<std::chrono::milliseconds>(lasted).count();
  VmAllocation& allocation = row.allocation;
  row.inputsMissing = true;
  allocation.name = row.record.name;
  allocation.hint.reset();
  allocation.state = HintState{};
  const auto held = hintState.find(row.record.name);
  if (withdrawn) {
    allocation.reason = "inputs missing for " + std::to_string(lastedMs) + " ms (" + missing +
                        "): hints stopped; the lease lapses and the guest unfolds or falls back";
  } else if (held != hintState.end()) {
    allocation.hint = held->second.hint;
    allocation.state.hint = held->second.hint;
    next[row.record.name] = allocation.state;
    allocation.reason = "inputs missing (" + missing + "): holding " + std::to_string(held->second.hint) +
                        " vCPUs for up to " + std::to_string(inputs.missingInputHold.count()) + " ms";
  } else {
    allocation.reason = "inputs missing (" + missing + "): not hinted";
  }
}

// A host-wide input is missing: every VM holds, then every hint stops.
void holdOrWithdraw(const TickInputs& inputs, const std::string& missing, TickReport& report,
                    const HintStates& hintState) {
  const auto lasted = inputs.now - inputs.inputsMissingSince.value_or(inputs.now);
  report.inputsMissing = missing;
  report.inputsMissingHostWide = true;
  report.hintsWithdrawn = lasted > inputs.missingInputHold;
  HintStates next;
  for (auto& row : report.vms) holdOrWithdrawRow(row, missing, lasted, report.hintsWithdrawn, inputs, hintState, next);
  report.hintState = std::move(next);
}

// Each pool with a VM that has no sample: why, by pool index.
std::map<std::size_t, std::string> poolsMissingSamples(const TickReport& report, const PoolLayout& layout) {
  std::map<std::size_t, std::vector<std::string>> missing;
  for (std::size_t i = 0; i < report.vms.size(); ++i)
    if (!report.vms[i].sampled) missing[layout.poolOfVm[i]].push_back("no vCPU sample of " + report.vms[i].record.name);
  std::map<std::size_t, std::string> text;
  for (const auto& [pool, reasons] : missing) text[pool] = *joined(reasons);
  return text;
}

// Every hinted VM's finished hint, in one place for both kinds of decision.
// A hint's reason speaks only of its own VM: while inputs are missing, the
// status names what is missing (other VMs among it), the guest hears only
// that its hint is held.
void finishHints(const TickInputs& inputs, TickReport& report) {
  for (auto& row : report.vms) {
    if (!row.allocation.hint) continue;
    if (!row.inputsMissing) {
      row.hint = wireHint(*row.allocation.hint, row.record.policy.mode, inputs.hintTtlMs, row.allocation.reason);
      continue;
    }
    const std::string held = "inputs missing on the host: holding " + std::to_string(*row.allocation.hint) +
                             " vCPUs for up to " + std::to_string(inputs.missingInputHold.count()) + " ms";
    row.hint = wireHint(*row.allocation.hint, row.record.policy.mode, inputs.hintTtlMs, held);
  }
}

// The part of a VM's row that depends only on the inventory and the samples:
// a decision between ticks, on the same samples, keeps it.
VmReport rowOf(const VmRecord& vm, const TickInputs& inputs) {
  VmReport row;
  row.record = vm;
  const auto now = inputs.samples.find(vm.name);
  row.sampled = now != inputs.samples.end();
  // The sample is this tick's; the record may be a refresh older: after a
  // vCPU hot-plug or unplug the sample's count is what the VM has, so no
  // hint names more or fewer vCPUs than it has.
  if (now != inputs.samples.end() && !now->second.vcpus.empty())
    row.record.vcpus = static_cast<std::uint32_t>(now->second.vcpus.size());
  row.weight = effectiveWeight(vm, inputs.cgroupV2);
  const auto before = inputs.previousSamples.find(vm.name);
  if (now != inputs.samples.end() && before != inputs.previousSamples.end())
    row.load = deriveLoad(before->second, now->second);
  return row;
}

// What the row's channel and the time of the decision make of its demand.
VmDemand demandOf(VmReport& row, const TickInputs& inputs, const HintStates& hintState) {
  const VmRecord& vm = row.record;
  VmDemand demand;
  demand.name = vm.name;
  demand.vcpus = std::max<std::uint32_t>(vm.vcpus, 1);
  demand.observedDemand = row.load ? row.load->demandCpus : 0.0;
  demand.overheadCpus = row.load ? row.load->otherRunCpus : 0.0;
  if (const auto recent = inputs.recentObservedDemand.find(vm.name); recent != inputs.recentObservedDemand.end())
    demand.recentObservedDemand = recent->second;
  const auto state = hintState.find(vm.name);
  demand.vcpusInUse =
      vcpusInUseDuring(state == hintState.end() ? nullptr : &state->second, inputs.windowStartedAt, inputs.now);
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
  return demand;
}

// A report with what every decision copies from its inputs, and no rows.
TickReport emptyReport(const TickInputs& inputs, std::uint64_t tick) {
  TickReport report;
  report.tick = tick;
  report.poolCpus = inputs.poolCpus;
  report.poolSource = inputs.poolSource;
  report.reserveCpus = inputs.reserveCpus;
  return report;
}

// The channel as it is now, or none known.
void takeChannel(VmReport& row, const TickInputs& inputs) {
  const auto channel = inputs.channels.find(row.record.name);
  row.channel = channel == inputs.channels.end() ? ChannelSnapshot{} : channel->second;
}

// Everything after the rows: the pools' capacity, the allocation, the holds
// of missing inputs, the hints. The rows carry their records, loads and
// channels; nothing of an earlier decision.
TickReport decideRows(const AllocationConfig& config, TickReport report, const TickInputs& inputs,
                      const HintStates& hintState) {
  std::vector<VmDemand> demands;
  demands.reserve(report.vms.size());
  for (VmReport& row : report.vms) demands.push_back(demandOf(row, inputs, hintState));
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
                   capacity.capacity,
                   0.0,
                   false,
                   std::nullopt};
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

  // Pools are decided apart: a pool whose VMs all have samples is decided
  // even while another pool holds for a VM without one.
  Allocation allocation = allocate(config, layout, capacities, demands, hintState, inputs.now);
  report.totalDemand = allocation.totalDemand;
  report.contention = allocation.contention;
  for (std::size_t p = 0; p < allocation.pools.size(); ++p) {
    report.pools[p].demand = allocation.pools[p].demand;
    report.pools[p].contention = allocation.pools[p].contention;
  }
  for (std::size_t i = 0; i < allocation.vms.size(); ++i) {
    if (allocation.vms[i].hint) report.hintState.emplace(allocation.vms[i].name, allocation.vms[i].state);
    report.vms[i].allocation = std::move(allocation.vms[i]);
  }
  const auto heldPools = poolsMissingSamples(report, layout);
  for (const auto& [p, missing] : heldPools) {
    PoolReport& pool = report.pools[p];
    const auto since = inputs.poolInputsMissingSince.find(pool.name);
    const auto lasted = since == inputs.poolInputsMissingSince.end() ? std::chrono::steady_clock::duration{}
                                                                     : inputs.now - since->second;
    pool.inputsMissing = missing;
    pool.hintsWithdrawn = lasted > inputs.missingInputHold;
    pool.contention = false;  // not decided
    HintStates next;
    for (std::size_t vm : layout.pools[p].vms) {
      report.hintState.erase(report.vms[vm].record.name);
      holdOrWithdrawRow(report.vms[vm], missing, lasted, pool.hintsWithdrawn, inputs, hintState, next);
    }
    report.hintState.merge(next);
    const std::string scoped = missing + (report.pools.size() > 1 ? " (pool " + pool.name + " held)" : "");
    report.inputsMissing = report.inputsMissing ? *report.inputsMissing + "; " + scoped : scoped;
  }
  report.contention =
      std::any_of(report.pools.begin(), report.pools.end(), [](const PoolReport& pool) { return pool.contention; });
  finishHints(inputs, report);
  return report;
}

}  // namespace

TickReport decideTick(const AllocationConfig& config, const TickInputs& inputs, const HintStates& hintState,
                      std::uint64_t tick) {
  TickReport report = emptyReport(inputs, tick);
  report.vms.reserve(inputs.vms.size());
  for (const VmRecord& vm : inputs.vms) {
    VmReport row = rowOf(vm, inputs);
    if (row.load) report.vmRunCpus += row.load->runCpus + row.load->otherRunCpus;
    takeChannel(row, inputs);
    report.vms.push_back(std::move(row));
  }
  return decideRows(config, std::move(report), inputs, hintState);
}

TickReport reviseDecision(const AllocationConfig& config, TickReport previous, const TickInputs& inputs,
                          const HintStates& hintState, std::uint64_t tick) {
  TickReport report = emptyReport(inputs, tick);
  report.vmRunCpus = previous.vmRunCpus;
  report.vms = std::move(previous.vms);
  for (VmReport& row : report.vms) {
    // The record, load, weight and whether sampled stay; the rest is decided again.
    row.statusFresh = false;
    row.allocation = VmAllocation{};
    row.pool.clear();
    row.inputsMissing = false;
    row.hint.reset();
    takeChannel(row, inputs);
  }
  return decideRows(config, std::move(report), inputs, hintState);
}

}  // namespace vcpufold::hostd
