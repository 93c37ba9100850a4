// SPDX-License-Identifier: GPL-2.0-or-later
#include "dynamics.h"

#include <algorithm>
#include <cmath>

namespace vcpufold::bench {

namespace {

constexpr unsigned kHoldTicks = 5;
constexpr double kStep = 0.01;  // seconds; the emulated VM logs counts at 10 ms

// The first time from `from` on at which every listed VM holds its target and
// keeps it `hold` seconds or until `until`; none if never.
std::optional<double> settledAt(const std::vector<CountTimeline>& preferred, const std::vector<std::size_t>& vms,
                                const std::vector<unsigned>& target, double from, double until, double hold) {
  std::optional<double> since;
  for (double t = from; t < until; t += kStep) {
    const bool holds =
        std::all_of(vms.begin(), vms.end(), [&](std::size_t i) { return countAt(preferred[i], t) == target[i]; });
    if (!holds) {
      since.reset();
      continue;
    }
    if (!since) since = t;
    if (t - *since >= hold - 1e-9) return since;
  }
  return since;  // held until the phase ended
}

}  // namespace

Dynamics analyseDynamics(const Scenario& scenario, const std::vector<CountTimeline>& preferred,
                         const std::vector<std::vector<unsigned>>& targets, double warmupSeconds, double tickSeconds) {
  Dynamics result;
  const auto phases = scenario.phases();
  const std::size_t count = scenario.vms.size();
  std::vector<unsigned> before;  // at the start, every vCPU preferred
  for (const auto& vm : scenario.vms) before.push_back(vm.vcpus);
  double steadySeconds = 0;
  unsigned steadyChanges = 0;
  for (std::size_t p = 0; p < phases.size(); ++p) {
    const double from = p == 0 ? -warmupSeconds : phases[p].from;
    const double until = phases[p].to;
    const auto& target = targets[p];
    std::vector<std::size_t> folding, unfolding, sized;
    for (std::size_t i = 0; i < count; ++i) {
      if (!scenario.vms[i].agent || phases[p].tasks[i] == 0) continue;
      sized.push_back(i);
      if (target[i] < before[i]) folding.push_back(i);
      if (target[i] > before[i]) unfolding.push_back(i);
    }
    const auto settle = [&](const std::vector<std::size_t>& vms) {
      Settling settling;
      if (vms.empty()) return settling;
      const auto at = settledAt(preferred, vms, target, from, until, kHoldTicks * tickSeconds);
      settling.kind = at ? Settling::Kind::Reached : Settling::Kind::NotReached;
      if (at) settling.ticks = (*at - from) / tickSeconds;
      return settling;
    };
    // The run's start is the daemons' start-up, not a change of load: no settling for it.
    if (p > 0) {
      result.folds.push_back(settle(folding));
      result.unfolds.push_back(settle(unfolding));
    }
    for (std::size_t i : sized)
      for (double t = std::max(from, 0.0); t < until; t += kStep)
        result.misSizingVcpuSeconds +=
            std::abs(static_cast<double>(countAt(preferred[i], t)) - static_cast<double>(target[i])) * kStep;
    // The first phase's steady time is the whole window: the warm-up was its settling time.
    const double steadyFrom = p == 0 ? 0.0 : from + kHoldTicks * tickSeconds;
    if (steadyFrom < until && !sized.empty()) {
      steadySeconds += until - steadyFrom;
      for (std::size_t i : sized)
        for (const auto& change : preferred[i])
          if (change.at > steadyFrom && change.at < until) ++steadyChanges;
    }
    for (std::size_t i = 0; i < count; ++i)
      if (scenario.vms[i].agent && phases[p].tasks[i] > 0) before[i] = target[i];
  }
  if (steadySeconds > 0) result.steadyChangesPerMinute = steadyChanges * 60.0 / steadySeconds;
  return result;
}

}  // namespace vcpufold::bench
