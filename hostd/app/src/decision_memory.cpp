// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/decision_memory.h"

#include <algorithm>
#include <cmath>

#include "vcpufold/common/log_text.h"
#include "vcpufold/common/number_text.h"
#include "vcpufold/hostd/capacity.h"

namespace vcpufold::hostd {

void addSnapshotInputs(TickInputs& inputs, const HostSnapshot& snapshot,
                       const std::optional<std::map<unsigned, CpuTicks>>& previousTicks) {
  inputs.missingInputs = snapshot.missing;
  inputs.samples = snapshot.samples;
  inputs.cgroupV2 = snapshot.cgroupV2;
  if (!snapshot.pool) return;
  inputs.poolCpus = static_cast<double>(snapshot.pool->cpus.size());
  inputs.poolSource = snapshot.pool->source;
  inputs.poolCpuSet = snapshot.pool->cpus;
  inputs.isolatedCpus = snapshot.isolatedCpus;
  if (previousTicks && snapshot.cpuTicks) {
    // Every pCPU's: a VM pinned outside the pool read still runs somewhere.
    inputs.cpuBusy = busyPerCpu(*previousTicks, *snapshot.cpuTicks, protocol::CpuSet::range(0, protocol::kMaxCpus - 1));
    double onPool = 0;
    for (const auto& [cpu, busy] : inputs.cpuBusy) onPool += snapshot.pool->cpus.contains(cpu) ? busy : 0.0;
    inputs.hostBusyCpus = onPool;
  }
}

bool snapshotIsStale(std::chrono::steady_clock::time_point takenAt, std::chrono::steady_clock::time_point now,
                     std::chrono::milliseconds interval) {
  return now - takenAt > interval * 3;
}

const TickReport& DecisionMemory::decideOnSnapshot(const DecisionSettings& settings, const std::vector<VmRecord>& vms,
                                                   const HostSnapshot* snapshot,
                                                   const std::optional<std::string>& staleWhy,
                                                   ChannelSnapshots channels, Clock::time_point now,
                                                   std::uint64_t number) {
  TickInputs inputs;
  inputs.now = now;
  inputs.vms = vms;
  applyFleetRules(settings.rules, inputs.vms);
  inputs.reserveCpus = settings.reserveCpus;
  inputs.statusMaxAge = settings.lease;
  inputs.missingInputHold = settings.missingInputHold;
  inputs.hintTtlMs = static_cast<std::uint32_t>(settings.lease.count());
  inputs.inputsMissingSince = hostInputsMissingSince_;
  inputs.poolInputsMissingSince = poolInputsMissingSince_;
  inputs.previousSamples = previousSamples_;
  inputs.previousNonVmCpus = previousNonVmCpus_;
  inputs.channels = std::move(channels);
  // The samples cover the time since the last decided snapshot.
  inputs.windowStartedAt = windowStartedAt_;
  inputs.recentObservedDemand = recentDemandSince(windowStartedAt_);
  const bool stale = staleWhy.has_value() || !snapshot;
  if (snapshot) inputs.cgroupV2 = snapshot->cgroupV2;
  if (stale)
    inputs.missingInputs.push_back(staleWhy.value_or("no inventory snapshot"));
  else
    addSnapshotInputs(inputs, *snapshot, previousTicks_);
  latest_ = decideTick(settings.allocation, inputs, hintState_, number);
  hintState_ = latest_.hintState;
  indexRows();
  remember(inputs, snapshot, stale, now);
  std::erase_if(eventBudgets_, [this](const auto& entry) { return !rowOf_.count(entry.first); });
  return latest_;
}

void DecisionMemory::startWindowAt(const HostSnapshot& snapshot) {
  previousSamples_ = snapshot.samples;
  if (snapshot.cpuTicks) previousTicks_ = snapshot.cpuTicks;
  windowStartedAt_ = snapshot.takenAt;
}

void DecisionMemory::remember(const TickInputs& inputs, const HostSnapshot* snapshot, bool stale,
                              Clock::time_point now) {
  if (latest_.inputsMissing) {
    if (!inputsMissingSince_) inputsMissingSince_ = now;
  } else {
    inputsMissingSince_.reset();
  }
  if (latest_.inputsMissingHostWide) {
    if (!hostInputsMissingSince_) hostInputsMissingSince_ = now;
  } else {
    hostInputsMissingSince_.reset();
    // A pool's episode lasts while a VM of it has no sample; a host-wide
    // episode does not say whether the pools' ended, so it keeps them.
    std::map<std::string, Clock::time_point> pools;
    for (const PoolReport& pool : latest_.pools)
      if (pool.inputsMissing) {
        const auto since = poolInputsMissingSince_.find(pool.name);
        pools[pool.name] = since == poolInputsMissingSince_.end() ? now : since->second;
      }
    poolInputsMissingSince_ = std::move(pools);
  }
  if (!stale) {
    // Counters of this snapshot become the baseline of the next decision; a
    // VM missing from it keeps its older baseline (a longer window).
    for (const auto& [name, sample] : inputs.samples) previousSamples_[name] = sample;
    windowStartedAt_ = snapshot->takenAt;
    // Measured before the next window begins: that window's samples will say.
    std::erase_if(recentDemand_, [this](const auto& entry) { return entry.second.at < *windowStartedAt_; });
    std::erase_if(previousSamples_, [&inputs](const auto& entry) {
      return std::none_of(inputs.vms.begin(), inputs.vms.end(),
                          [&entry](const VmRecord& vm) { return vm.name == entry.first; });
    });
    if (snapshot->cpuTicks) previousTicks_ = snapshot->cpuTicks;
    if (!latest_.inputsMissingHostWide && inputs.hostBusyCpus) {
      // A held pool's measure counts its VM without a sample as non-VM load: its last one stands.
      std::map<std::string, double> measured;
      for (const PoolReport& pool : latest_.pools) {
        const auto before = previousNonVmCpus_.find(pool.name);
        if (!pool.inputsMissing)
          measured[pool.name] = pool.measuredNonVmCpus;
        else if (before != previousNonVmCpus_.end())
          measured[pool.name] = before->second;
      }
      previousNonVmCpus_ = std::move(measured);
    }
  }
  if (!stale && !latest_.inputsMissingHostWide)
    decidedInputs_ = inputs;
  else
    decidedInputs_.reset();
}

const TickReport* DecisionMemory::decideOnEvent(const DecisionSettings& settings, ChannelSnapshots channels,
                                                Clock::time_point now, std::uint64_t number) {
  if (!decidedInputs_) return nullptr;  // a decision since found inputs missing: its hold stands
  decidedInputs_->now = now;
  decidedInputs_->recentObservedDemand = recentDemandSince(decidedInputs_->windowStartedAt);
  decidedInputs_->channels = std::move(channels);
  // The same VMs in the same order as the decision revised: rowOf_ stands.
  latest_ = reviseDecision(settings.allocation, std::move(latest_), *decidedInputs_, hintState_, number);
  hintState_ = latest_.hintState;
  return &latest_;
}

bool DecisionMemory::claimNeedsEvidence(const std::string& vm, double reportedDemand, double measured) const {
  const auto index = rowOf_.find(vm);
  if (index == rowOf_.end()) return false;
  const VmReport& row = latest_.vms[index->second];
  const double seen = std::max(row.load ? row.load->demandCpus : 0.0, measured);
  return reportedDemand > seen + kReportEvidenceSlackCpus;
}

void DecisionMemory::noteRecentDemand(const std::string& vm, double demandCpus, Clock::time_point at) {
  recentDemand_[vm] = RecentDemand{demandCpus, at};
}

std::map<std::string, double> DecisionMemory::recentDemandSince(std::optional<Clock::time_point> windowStart) const {
  std::map<std::string, double> recent;
  for (const auto& [vm, measured] : recentDemand_)
    if (!windowStart || measured.at >= *windowStart) recent[vm] = measured.cpus;
  return recent;
}

bool DecisionMemory::allowEventDecisionFor(const std::string& vm, Clock::time_point now) {
  return eventBudgets_.try_emplace(vm, kEventDecisionsPerVm, kEventDecisionWindow).first->second.allow(now);
}

void DecisionMemory::indexRows() {
  rowOf_.clear();
  rowOf_.reserve(latest_.vms.size());
  for (std::size_t i = 0; i < latest_.vms.size(); ++i) rowOf_.emplace(latest_.vms[i].record.name, i);
}

bool DecisionMemory::worthDeciding(Clock::time_point takenAt, std::chrono::milliseconds interval) {
  if (lastDecidedSnapshotAt_ && takenAt - *lastDecidedSnapshotAt_ < interval / 2) return false;
  lastDecidedSnapshotAt_ = takenAt;
  return true;
}

std::optional<std::string> DecisionMemory::demandMoved(const std::string& vm, double demand, bool cooperative) const {
  if (!decidedInputs_ || !cooperative) return std::nullopt;  // nothing to revise, or its word does not count
  // Asked for every status of every VM: a lookup, not a scan of a thousand rows.
  const auto index = rowOf_.find(vm);
  if (index == rowOf_.end()) return std::nullopt;
  const VmReport* row = &latest_.vms[index->second];
  // Compared with the report the last decision had (else with the demand it used).
  const double before = row->statusFresh ? row->channel.lastStatus->demand
                                         : row->allocation.demand - row->allocation.overhead;
  if (std::abs(demand - before) < 1.0) return std::nullopt;
  return escapeForLog(vm, 128) + " reports demand " + fixedDecimals(demand, 2) + " (was " + fixedDecimals(before, 2) +
         ")";
}

std::optional<DecisionMemory::Clock::time_point> DecisionMemory::nextUnfoldDue(const AllocationConfig& config) const {
  return hostd::nextUnfoldDue(config, hintState_);
}

}  // namespace vcpufold::hostd
