// SPDX-License-Identifier: GPL-2.0-or-later
#include "outcome.h"

#include <algorithm>
#include <cmath>

namespace vcpufold::bench {

std::vector<const RunResult*> ScenarioOutcome::runsOf(Mode mode) const {
  const auto same = sameAs.find(mode);
  const Mode source = same == sameAs.end() ? mode : same->second;
  std::vector<const RunResult*> result;
  for (const auto& run : runs)
    if (run.mode == source) result.push_back(&run);
  return result;
}

bool ScenarioOutcome::has(Mode mode) const { return !runsOf(mode).empty(); }

std::vector<double> ScenarioOutcome::totals(Mode mode) const {
  std::vector<double> values;
  for (const auto* run : runsOf(mode)) values.push_back(run->totalOperationsPerSecond());
  return values;
}

std::map<unsigned, double> ScenarioOutcome::totalsByRepetition(Mode mode) const {
  std::map<unsigned, double> values;
  for (const auto* run : runsOf(mode)) values[run->repetition] = run->totalOperationsPerSecond();
  return values;
}

std::optional<double> ScenarioOutcome::fairnessOf(const RunResult& run) const {
  if (scenario.phased()) return std::nullopt;
  std::vector<double> demands, weights;
  for (const auto& vm : scenario.vms) {
    demands.push_back(std::min(tasksAt(vm.schedule, 0), vm.vcpus));
    weights.push_back(vm.weight);
  }
  const auto entitled = maxMinShares(scenario.pcpus, demands, weights);
  double entitledTotal = 0, receivedTotal = 0;
  for (std::size_t i = 0; i < run.vms.size(); ++i)
    if (demands[i] > 0) {
      entitledTotal += entitled[i];
      receivedTotal += run.vms[i].cpus;
    }
  if (entitledTotal <= 0 || receivedTotal <= 0) return std::nullopt;
  double worst = 0;
  for (std::size_t i = 0; i < run.vms.size(); ++i) {
    if (demands[i] <= 0) continue;
    const double share = run.vms[i].cpus / receivedTotal, fair = entitled[i] / entitledTotal;
    worst = std::max(worst, std::abs(share - fair) / fair);
  }
  return worst;
}

Dynamics ScenarioOutcome::dynamicsOf(const RunResult& run, double tickSeconds) const {
  std::vector<CountTimeline> preferred;
  for (const auto& vm : run.vms) preferred.push_back(vm.preferred);
  return analyseDynamics(scenario, preferred, targets, run.warmupSeconds, tickSeconds);
}

std::optional<Estimate> pairedRatioOf(const ScenarioOutcome& outcome, Mode mode, Mode base) {
  if (!outcome.has(mode) || !outcome.has(base)) return std::nullopt;
  return estimatePairedRatio(outcome.totalsByRepetition(mode), outcome.totalsByRepetition(base));
}

}  // namespace vcpufold::bench
