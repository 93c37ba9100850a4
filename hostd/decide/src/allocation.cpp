// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/allocation.h"

#include <algorithm>
#include <cmath>

#include "vcpufold/common/number_text.h"

namespace vcpufold::hostd {
namespace {

constexpr double kEpsilon = 1e-9;

// The most CPUs a VM can use under its policy, when it follows hints.
std::uint32_t upperBound(const VmDemand& vm) {
  std::uint32_t upper = vm.vcpus;
  if (vm.policy.maxVcpus) upper = std::min(upper, *vm.policy.maxVcpus);
  if (vm.policy.mode == FoldMode::Fixed && vm.policy.fixedVcpus) upper = std::min(upper, *vm.policy.fixedVcpus);
  return std::max<std::uint32_t>(upper, 1);
}

bool followsHints(const VmDemand& vm) { return vm.cooperative && vm.policy.mode != FoldMode::Guest; }

// Whether the host sees the VM use the vCPUs it has: the evidence a report
// above the observed demand needs.
bool usesWhatItHas(const VmDemand& vm) {
  const std::uint32_t inUse = std::min(vm.vcpusInUse.value_or(vm.vcpus), vm.vcpus);
  const double seen = std::max(vm.observedDemand, vm.recentObservedDemand.value_or(0.0));
  return seen + kReportEvidenceSlackCpus >= static_cast<double>(inUse) - kEpsilon;
}

// The demand before the clamp, and whether a report was set aside.
std::pair<double, bool> demandOf(const VmDemand& vm) {
  if (!vm.reportedDemand) return {vm.observedDemand, false};
  const double reported = *vm.reportedDemand;
  if (reported <= vm.observedDemand) return {vm.reportIsNewer ? reported : vm.observedDemand, false};
  if (usesWhatItHas(vm)) return {reported, false};
  return {vm.observedDemand, reported > vm.observedDemand + kReportEvidenceSlackCpus};
}

HintState settled(std::uint32_t hint) {
  HintState state;
  state.hint = hint;
  return state;
}

// The share as whole guest cores within the policy's bounds.
std::uint32_t hintForShare(const VmDemand& vm, double share) {
  const std::uint32_t upper = upperBound(vm);
  const std::uint32_t threads = std::max<std::uint32_t>(vm.threadsPerCore, 1);
  auto cpus = static_cast<std::uint32_t>(std::ceil(std::max(share, 0.0) - kEpsilon));
  cpus = (cpus + threads - 1) / threads * threads;
  const std::uint32_t lower = std::min(std::max<std::uint32_t>(vm.policy.minVcpus, 1), upper);
  return std::clamp(cpus, lower, upper);
}

}  // namespace

std::optional<std::chrono::steady_clock::time_point> nextUnfoldDue(const AllocationConfig& config,
                                                                   const HintStates& state) {
  std::optional<std::chrono::steady_clock::time_point> due;
  for (const auto& [name, vm] : state)
    if (vm.unfoldAskedSince && (!due || *vm.unfoldAskedSince + config.unfoldDelay < *due))
      due = *vm.unfoldAskedSince + config.unfoldDelay;
  return due;
}

namespace {

// Each pool's fair shares: its VMs' demands where it is not contended.
std::vector<double> sharesOf(const PoolLayout& layout, const std::vector<PoolCapacity>& capacities,
                             const std::vector<double>& demands, const std::vector<double>& weights,
                             const std::vector<PoolAllocation>& pools) {
  std::vector<double> shares = demands;
  for (std::size_t p = 0; p < layout.pools.size(); ++p) {
    if (!pools[p].contention) continue;
    const CpuPool& pool = layout.pools[p];
    SharingProblem problem;
    problem.placeCapacity = capacities[p].placeCapacity;
    for (std::size_t vm : pool.vms) {
      std::vector<std::size_t> local;  // the VM's places, as indexes into the pool's
      for (std::size_t place : layout.placesOfVm[vm])
        local.push_back(
            static_cast<std::size_t>(std::find(pool.places.begin(), pool.places.end(), place) - pool.places.begin()));
      problem.placesOf.push_back(std::move(local));
      problem.demands.push_back(demands[vm]);
      problem.weights.push_back(weights[vm]);
    }
    const std::vector<double> poolShares = maxMinShares(problem);
    for (std::size_t k = 0; k < pool.vms.size(); ++k) shares[pool.vms[k]] = poolShares[k];
  }
  return shares;
}

}  // namespace

Allocation allocate(const AllocationConfig& config, double capacity, const std::vector<VmDemand>& vms,
                    const HintStates& previous, std::chrono::steady_clock::time_point now) {
  PoolLayout layout;
  layout.places.emplace_back();
  layout.pools.push_back(CpuPool{"", {}, {0}, {}});
  for (std::size_t vm = 0; vm < vms.size(); ++vm) {
    layout.pools[0].vms.push_back(vm);
    layout.poolOfVm.push_back(0);
    layout.placesOfVm.push_back({0});
    layout.dedicated.push_back(false);
  }
  PoolCapacity whole;
  whole.capacity = std::max(capacity, 0.0);
  whole.placeCapacity = {whole.capacity};
  return allocate(config, layout, {whole}, vms, previous, now);
}

Allocation allocate(const AllocationConfig& config, const PoolLayout& layout,
                    const std::vector<PoolCapacity>& capacities, const std::vector<VmDemand>& vms,
                    const HintStates& previous, std::chrono::steady_clock::time_point now) {
  Allocation result;
  std::vector<double> demands;
  std::vector<double> weights;
  demands.reserve(vms.size());
  weights.reserve(vms.size());
  for (std::size_t p = 0; p < layout.pools.size(); ++p) {
    PoolAllocation pool;
    pool.name = layout.pools[p].name;
    pool.capacity = p < capacities.size() ? capacities[p].capacity : 0.0;
    result.pools.push_back(pool);
    result.capacity += pool.capacity;
  }
  std::vector<bool> discounted;
  discounted.reserve(vms.size());
  for (std::size_t i = 0; i < vms.size(); ++i) {
    const VmDemand& vm = vms[i];
    auto [demand, reportDiscounted] = demandOf(vm);
    // A VM following hints cannot use more than its policy lets it; others, their vCPUs.
    demand = std::clamp(demand, 0.0, static_cast<double>(followsHints(vm) ? upperBound(vm) : vm.vcpus));
    // Its QEMU's own threads are its load too, shared under its weight.
    demand += std::max(vm.overheadCpus, 0.0);
    demands.push_back(demand);
    discounted.push_back(reportDiscounted);
    weights.push_back(vm.weight);
    result.totalDemand += demand;
    result.pools[layout.poolOfVm[i]].demand += demand;
  }
  std::vector<std::string> poolContext;  // the part of every reason that is the same for a pool's VMs, formatted once
  for (std::size_t p = 0; p < result.pools.size(); ++p) {
    PoolAllocation& pool = result.pools[p];
    // A VM alone in its pool (pinned apart) competes only with the host's own
    // load, which moves by hundredths of a CPU from tick to tick: folding it
    // would give no other VM anything, so it takes more than that.
    const double allowance = layout.pools[p].vms.size() == 1 ? config.unfoldMarginCpus : 0.0;
    pool.contention = pool.demand > pool.capacity + allowance + kEpsilon;
    result.contention = result.contention || pool.contention;
    // A decision between ticks must stay cheap at a thousand VMs: formatted once per pool.
    const std::string name = result.pools.size() > 1 ? "pool " + pool.name + ": " : "";
    poolContext.push_back(pool.contention ? name + "contention: demand " + fixedDecimals(pool.demand, 2) +
                                                " > capacity " + fixedDecimals(pool.capacity, 2) + "; fair share "
                                          : name + "no contention: demand " + fixedDecimals(pool.demand, 2) +
                                                " within capacity " + fixedDecimals(pool.capacity, 2));
  }
  const std::vector<double> shares = sharesOf(layout, capacities, demands, weights, result.pools);
  result.vms.reserve(vms.size());

  for (std::size_t i = 0; i < vms.size(); ++i) {
    const VmDemand& vm = vms[i];
    VmAllocation out;
    out.name = vm.name;
    out.demand = demands[i];
    out.overhead = std::max(vm.overheadCpus, 0.0);
    out.share = shares[i];
    // What is left of the share for its vCPUs once its QEMU's own work is paid.
    const double vcpuShare = std::max(out.share - out.overhead, 0.0);
    out.pool = layout.poolOfVm[i];
    out.dedicated = layout.dedicated[i];
    const bool contention = result.pools[out.pool].contention;
    const std::string& pool = poolContext[out.pool];
    const auto found = previous.find(vm.name);
    const HintState before = found == previous.end() ? HintState{} : found->second;
    // Every decision of the VM ends here: the hint's growth is remembered (its
    // samples lag it), and a report set aside is said.
    const auto finish = [&](VmAllocation&& decided) {
      if (before.hint != 0 && decided.state.hint > before.hint) {
        decided.state.grewAt = now;
        decided.state.hintBeforeGrowth = before.hint;
      } else if (decided.state.hint != 0) {
        decided.state.grewAt = before.grewAt;
        decided.state.hintBeforeGrowth = before.hintBeforeGrowth;
      }
      decided.reportDiscounted = discounted[i];
      if (decided.reportDiscounted)
        decided.reason += "; reported demand " + fixedDecimals(*vm.reportedDemand, 2) +
                          " not counted: the host sees it use " + fixedDecimals(vm.observedDemand, 2) + " of " +
                          std::to_string(std::min(vm.vcpusInUse.value_or(vm.vcpus), vm.vcpus)) + " vCPUs";
      result.vms.push_back(std::move(decided));
    };
    // The reason of an auto hint: the pool's context, then this VM's share,
    // then what became of it. Built in one buffer: at a thousand VMs a
    // decision between ticks is mostly this text.
    const auto context = [&] {
      std::string text;
      text.reserve(pool.size() + 128);
      text += pool;
      if (!contention) return text;
      text += fixedDecimals(out.share, 2);
      text += " (weight ";
      text += fixedDecimals(vm.weight, 2);
      if (out.overhead >= 0.005) {
        text += ", of which ";
        text += fixedDecimals(out.overhead, 2);
        text += " its QEMU's own threads";
      }
      text += ")";
      return text;
    };
    if (!vm.cooperative) {
      if (vm.reachable && vm.policy.mode != FoldMode::Guest) {
        // Hinting all vCPUs folds nothing, and gives the agent a hint to acknowledge.
        out.hint = vm.vcpus;
        out.state = settled(vm.vcpus);
        out.reason = "agent has not acknowledged a hint: all " + std::to_string(vm.vcpus) +
                     " vCPUs until it does; counted at demand " + fixedDecimals(out.demand, 2);
      } else {
        out.reason = "no working agent: counted at demand " + fixedDecimals(out.demand, 2) + ", not hinted";
      }
      finish(std::move(out));
      continue;
    }
    switch (vm.policy.mode) {
      case FoldMode::Guest:
        out.reason = "policy guest: the guest's own fallback decides";
        finish(std::move(out));
        continue;
      case FoldMode::Off:
        out.hint = vm.vcpus;
        out.state = settled(vm.vcpus);
        out.reason = "policy off: all " + std::to_string(vm.vcpus) + " vCPUs";
        finish(std::move(out));
        continue;
      case FoldMode::Fixed:
        out.hint = upperBound(vm);
        out.state = settled(*out.hint);
        out.reason = "policy fixed: " + std::to_string(*out.hint) + " vCPUs";
        finish(std::move(out));
        continue;
      case FoldMode::Auto:
        break;
    }
    if (vm.autoFoldDeclinedClass) {
      // The agent would acknowledge a smaller hint with all its CPUs: it is
      // counted at its demand like a VM with policy off, and said so.
      out.hint = vm.vcpus;
      out.state = settled(vm.vcpus);
      out.reason = "not folded: guest kernel (" + *vm.autoFoldDeclinedClass +
                   ", which its agent does not fold on auto hints): all " + std::to_string(vm.vcpus) +
                   " vCPUs, counted at demand " + fixedDecimals(out.demand, 2);
      finish(std::move(out));
      continue;
    }
    if (out.dedicated) {
      out.hint = vm.vcpus;
      out.state = settled(vm.vcpus);
      out.reason = "dedicated: each vCPU pinned to a pCPU of its own (" + result.pools[out.pool].name + "): all " +
                   std::to_string(vm.vcpus) + " vCPUs, never folded";
      finish(std::move(out));
      continue;
    }

    const std::uint32_t target = contention ? hintForShare(vm, vcpuShare) : upperBound(vm);
    out.reason = context();
    if (before.hint == 0 || target <= before.hint) {
      // Folding (or the first hint) takes effect at once.
      out.hint = target;
      out.state = settled(target);
      out.reason += " -> " + std::to_string(target) + " vCPUs";
    } else if (contention && vcpuShare < before.hint + config.unfoldMarginCpus) {
      // A share hovering just above a core boundary (load noise, QEMU's own threads) holds the hint.
      out.hint = before.hint;
      out.state = settled(before.hint);
      out.reason += " -> holding " + std::to_string(before.hint) + " vCPUs (share within " +
                    fixedDecimals(config.unfoldMarginCpus, 2) + " of it)";
    } else {
      const auto since = before.unfoldAskedSince.value_or(now);
      const std::uint32_t candidate = before.unfoldAskedSince ? std::min(before.unfoldTarget, target) : target;
      const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(now - since);
      if (waited >= config.unfoldDelay) {
        out.hint = candidate;
        out.state = settled(candidate);
        out.reason += " -> unfold to " + std::to_string(candidate) + " vCPUs (asked for " +
                      std::to_string(waited.count()) + " ms)";
      } else {
        out.hint = before.hint;
        out.state = settled(before.hint);
        out.state.unfoldTarget = candidate;
        out.state.unfoldAskedSince = since;
        out.reason += " -> " + std::to_string(target) + " vCPUs, unfold pending (" + std::to_string(waited.count()) +
                      " of " + std::to_string(config.unfoldDelay.count()) + " ms); holding " +
                      std::to_string(before.hint);
      }
    }
    finish(std::move(out));
  }
  return result;
}

std::optional<std::uint32_t> vcpusInUseDuring(const HintState* state,
                                              std::optional<std::chrono::steady_clock::time_point> windowStartedAt,
                                              std::chrono::steady_clock::time_point now) {
  if (state == nullptr || state->hint == 0) return std::nullopt;
  std::uint32_t inUse = state->hint;
  if (state->grewAt && state->hintBeforeGrowth != 0) {
    // The guest applies a larger hint a moment after it is sent, so the
    // window after the growth may still show the smaller one.
    const auto windowStart = windowStartedAt.value_or(now);
    const auto window = now - windowStart;
    if (*state->grewAt >= windowStart - window) inUse = std::min(inUse, state->hintBeforeGrowth);
  }
  return inUse;
}

}  // namespace vcpufold::hostd
