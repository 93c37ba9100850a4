// SPDX-License-Identifier: GPL-2.0-or-later
#include "search_space.h"

#include <algorithm>
#include <random>
#include <tuple>

namespace vcpufold::bench {

std::vector<CountRange> searchSpaceOf(const Scenario& scenario, const std::vector<unsigned>& tasks,
                                      const std::vector<unsigned>& idleCounts) {
  std::vector<CountRange> space;
  using Likeness = std::tuple<unsigned, unsigned, double, std::string, bool, unsigned>;
  std::vector<Likeness> classes;
  for (std::size_t i = 0; i < scenario.vms.size(); ++i) {
    const VmSpec& vm = scenario.vms[i];
    CountRange range;
    if (!vm.agent) {
      range.low = range.high = vm.vcpus;  // nobody folds a VM without an agent
    } else if (tasks[i] == 0) {
      range.low = range.high = std::clamp(idleCounts[i], 1u, vm.vcpus);
    } else {
      range.low = 1;
      range.high = std::min(vm.vcpus, tasks[i]);  // preferred vCPUs beyond the tasks only halt
    }
    range.bigSteps = vm.vcpus >= 8;
    const Likeness likeness{vm.vcpus, vm.threadsPerCore, vm.weight, vm.workload, vm.agent, tasks[i]};
    const auto found = std::find(classes.begin(), classes.end(), likeness);
    range.symmetryClass = static_cast<unsigned>(found - classes.begin());
    if (found == classes.end()) classes.push_back(likeness);
    space.push_back(range);
  }
  return space;
}

std::vector<std::vector<unsigned>> searchStarts(const Scenario& scenario, const std::vector<unsigned>& tasks,
                                                const std::vector<unsigned>& staticFair, std::uint32_t seed) {
  std::vector<unsigned> ones, unfolded, atDemand, random;
  // mt19937's sequence is fixed by the standard (its distributions are not), so the start is the same everywhere.
  std::mt19937 generator(seed);
  for (std::size_t i = 0; i < scenario.vms.size(); ++i) {
    const unsigned vcpus = scenario.vms[i].vcpus;
    ones.push_back(1);
    unfolded.push_back(vcpus);
    atDemand.push_back(std::clamp(tasks[i], 1u, vcpus));
    random.push_back(1 + static_cast<unsigned>(generator() % vcpus));
  }
  return {staticFair, ones, unfolded, atDemand, random};
}

std::vector<unsigned> staticFairStart(const Scenario& scenario) {
  std::vector<double> weights;
  std::vector<unsigned> vcpus;
  for (const auto& vm : scenario.vms) {
    weights.push_back(vm.weight);
    vcpus.push_back(vm.vcpus);
  }
  std::vector<unsigned> start = staticFairSizes(scenario.pcpus, weights, vcpus);
  for (std::size_t i = 0; i < start.size(); ++i)
    if (!scenario.vms[i].agent) start[i] = scenario.vms[i].vcpus;
  return start;
}

std::vector<DemandPlan> planSearch(const Scenario& scenario, double probeSeconds) {
  std::vector<DemandPlan> plans;
  for (const auto& phase : scenario.phases()) {
    const auto found = std::find_if(plans.begin(), plans.end(), [&](const auto& p) { return p.tasks == phase.tasks; });
    if (found != plans.end()) {
      found->seconds += phase.to - phase.from;
      continue;
    }
    DemandPlan plan;
    plan.tasks = phase.tasks;
    plan.seconds = phase.to - phase.from;
    plans.push_back(plan);
  }
  const auto start = staticFairStart(scenario);
  const double budgetPerDemand = scenario.searchSeconds / static_cast<double>(std::max<std::size_t>(plans.size(), 1));
  for (auto& plan : plans) {
    plan.space = distinctAssignments(searchSpaceOf(scenario, plan.tasks, start), kExhaustiveLimit);
    plan.maxMeasurements = static_cast<unsigned>(std::max(1.0, budgetPerDemand / (probeSeconds + kProbeSettleSeconds)));
    plan.exhaustive = plan.space <= kExhaustiveLimit && plan.space <= plan.maxMeasurements;
  }
  return plans;
}

}  // namespace vcpufold::bench
