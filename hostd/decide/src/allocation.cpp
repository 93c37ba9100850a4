#include "vcpufold/hostd/allocation.h"

#include <algorithm>
#include <cmath>
#include <numeric>

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

std::vector<double> waterFill(double capacity, const std::vector<double>& demands, const std::vector<double>& weights) {
  std::vector<double> shares(demands.size(), 0.0);
  std::vector<std::size_t> order(demands.size());
  std::iota(order.begin(), order.end(), 0);
  auto weightOf = [&weights](std::size_t i) { return std::max(weights[i], kEpsilon); };
  // Lowest demand per unit of weight first: those are satisfied before the level reaches them.
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return demands[a] / weightOf(a) < demands[b] / weightOf(b); });
  double remaining = std::max(capacity, 0.0);
  double remainingWeight = 0.0;
  for (std::size_t i : order) remainingWeight += weightOf(i);
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::size_t i = order[k];
    const double level = remaining / remainingWeight;
    if (demands[i] <= level * weightOf(i)) {
      shares[i] = std::max(demands[i], 0.0);
      remaining -= shares[i];
      remainingWeight -= weightOf(i);
      continue;
    }
    for (std::size_t rest = k; rest < order.size(); ++rest) shares[order[rest]] = level * weightOf(order[rest]);
    break;
  }
  return shares;
}

std::optional<std::chrono::steady_clock::time_point> nextUnfoldDue(const AllocationConfig& config,
                                                                   const std::map<std::string, HintState>& state) {
  std::optional<std::chrono::steady_clock::time_point> due;
  for (const auto& [name, vm] : state)
    if (vm.unfoldAskedSince && (!due || *vm.unfoldAskedSince + config.unfoldDelay < *due))
      due = *vm.unfoldAskedSince + config.unfoldDelay;
  return due;
}

Allocation allocate(const AllocationConfig& config, double capacity, const std::vector<VmDemand>& vms,
                    const std::map<std::string, HintState>& previous, std::chrono::steady_clock::time_point now) {
  Allocation result;
  result.capacity = std::max(capacity, 0.0);
  std::vector<double> demands;
  std::vector<double> weights;
  demands.reserve(vms.size());
  weights.reserve(vms.size());
  for (const VmDemand& vm : vms) {
    double demand = vm.reportIsNewer && vm.reportedDemand
                        ? *vm.reportedDemand
                        : std::max(vm.observedDemand, vm.reportedDemand.value_or(0.0));
    // A VM following hints cannot use more than its policy lets it; others, their vCPUs.
    demand = std::clamp(demand, 0.0, static_cast<double>(followsHints(vm) ? upperBound(vm) : vm.vcpus));
    demands.push_back(demand);
    weights.push_back(vm.weight);
    result.totalDemand += demand;
  }
  result.contention = result.totalDemand > result.capacity + kEpsilon;
  const std::vector<double> shares = result.contention ? waterFill(result.capacity, demands, weights) : demands;
  // The part of every reason that is the same for all VMs, formatted once (a
  // decision between ticks must stay cheap at a thousand VMs).
  const std::string pool = result.contention ? "contention: demand " + fixedDecimals(result.totalDemand, 2) +
                                                   " > capacity " + fixedDecimals(result.capacity, 2) + "; fair share "
                                             : "no contention: demand " + fixedDecimals(result.totalDemand, 2) +
                                                   " within capacity " + fixedDecimals(result.capacity, 2);
  result.vms.reserve(vms.size());

  for (std::size_t i = 0; i < vms.size(); ++i) {
    const VmDemand& vm = vms[i];
    VmAllocation out;
    out.name = vm.name;
    out.demand = demands[i];
    out.share = shares[i];
    const auto found = previous.find(vm.name);
    const HintState before = found == previous.end() ? HintState{} : found->second;
    const std::string context =
        result.contention ? pool + fixedDecimals(out.share, 2) + " (weight " + fixedDecimals(vm.weight, 2) + ")" : pool;
    if (!vm.cooperative) {
      if (vm.reachable && vm.policy.mode != FoldMode::Guest) {
        // Hinting all vCPUs folds nothing, and gives the agent a hint to acknowledge.
        out.hint = vm.vcpus;
        out.state = HintState{vm.vcpus, 0, std::nullopt};
        out.reason = "agent has not acknowledged a hint: all " + std::to_string(vm.vcpus) +
                     " vCPUs until it does; counted at demand " + fixedDecimals(out.demand, 2);
      } else {
        out.reason = "no working agent: counted at demand " + fixedDecimals(out.demand, 2) + ", not hinted";
      }
      result.vms.push_back(std::move(out));
      continue;
    }
    switch (vm.policy.mode) {
      case FoldMode::Guest:
        out.reason = "policy guest: the guest's own fallback decides";
        result.vms.push_back(std::move(out));
        continue;
      case FoldMode::Off:
        out.hint = vm.vcpus;
        out.state = HintState{vm.vcpus, 0, std::nullopt};
        out.reason = "policy off: all " + std::to_string(vm.vcpus) + " vCPUs";
        result.vms.push_back(std::move(out));
        continue;
      case FoldMode::Fixed:
        out.hint = upperBound(vm);
        out.state = HintState{*out.hint, 0, std::nullopt};
        out.reason = "policy fixed: " + std::to_string(*out.hint) + " vCPUs";
        result.vms.push_back(std::move(out));
        continue;
      case FoldMode::Auto:
        break;
    }

    const std::uint32_t target = result.contention ? hintForShare(vm, out.share) : upperBound(vm);
    const std::string targetText = std::to_string(target) + " vCPUs";
    if (before.hint == 0 || target <= before.hint) {
      // Folding (or the first hint) takes effect at once.
      out.hint = target;
      out.state = HintState{target, 0, std::nullopt};
      out.reason = context + " -> " + targetText;
    } else if (result.contention && out.share < before.hint + config.unfoldMarginCpus) {
      // A share hovering just above a core boundary (load noise, QEMU's own threads) holds the hint.
      out.hint = before.hint;
      out.state = HintState{before.hint, 0, std::nullopt};
      out.reason = context + " -> holding " + std::to_string(before.hint) + " vCPUs (share within " +
                   fixedDecimals(config.unfoldMarginCpus, 2) + " of it)";
    } else {
      const auto since = before.unfoldAskedSince.value_or(now);
      const std::uint32_t candidate = before.unfoldAskedSince ? std::min(before.unfoldTarget, target) : target;
      const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(now - since);
      if (waited >= config.unfoldDelay) {
        out.hint = candidate;
        out.state = HintState{candidate, 0, std::nullopt};
        out.reason = context + " -> unfold to " + std::to_string(candidate) + " vCPUs (asked for " +
                     std::to_string(waited.count()) + " ms)";
      } else {
        out.hint = before.hint;
        out.state = HintState{before.hint, candidate, since};
        out.reason = context + " -> " + targetText + ", unfold pending (" + std::to_string(waited.count()) + " of " +
                     std::to_string(config.unfoldDelay.count()) + " ms); holding " + std::to_string(before.hint);
      }
    }
    result.vms.push_back(std::move(out));
  }
  return result;
}

}  // namespace vcpufold::hostd
