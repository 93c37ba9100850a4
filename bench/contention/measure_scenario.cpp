// SPDX-License-Identifier: GPL-2.0-or-later
#include "measure_scenario.h"

#include <algorithm>
#include <cstdio>

#include "bench_text.h"

namespace vcpufold::bench {

namespace {

// The same counts over the same phases, whatever the boundaries in between.
FixedPlan normalised(const FixedPlan& plan) {
  FixedPlan result;
  for (const auto& phase : plan)
    if (result.empty() || result.back().sizes != phase.sizes) result.push_back(phase);
  return result;
}

FixedPlan uniformPlan(std::vector<unsigned> sizes, const Scenario& scenario) {
  for (std::size_t i = 0; i < sizes.size(); ++i)
    if (!scenario.vms[i].agent) sizes[i] = scenario.vms[i].vcpus;  // nobody folds a VM without an agent
  return {{0.0, sizes}};
}

std::vector<std::vector<unsigned>> targetsPerPhase(const Scenario& scenario, const FixedPlan& plan) {
  std::vector<std::vector<unsigned>> targets;
  for (const auto& phase : scenario.phases()) {
    const FixedPhase* current = &plan.front();
    for (const auto& fixed : plan)
      if (fixed.from <= phase.from + 1e-9) current = &fixed;
    targets.push_back(current->sizes);
  }
  return targets;
}

}  // namespace

unsigned repetitionsOf(const Scenario& scenario, const MeasureOptions& options) {
  return options.repetitionsGiven ? options.repetitions : scenario.repetitions.value_or(options.repetitions);
}

ScenarioOutcome measureScenario(const BenchConfig& config, const Scenario& scenario, const MeasureOptions& options) {
  ScenarioOutcome outcome;
  outcome.scenario = scenario;
  const auto say = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };
  std::vector<double> weights;
  std::vector<unsigned> vcpus, ones;
  for (const auto& vm : scenario.vms) {
    weights.push_back(vm.weight);
    vcpus.push_back(vm.vcpus);
    ones.push_back(1);
  }
  const bool wantsSearch = std::any_of(scenario.modes.begin(), scenario.modes.end(),
                                       [](Mode m) { return m == Mode::BestStatic || m == Mode::Clairvoyant; });
  if (wantsSearch && options.search) {
    const bool clairvoyant = std::find(scenario.modes.begin(), scenario.modes.end(), Mode::Clairvoyant) !=
                             scenario.modes.end();
    say(scenario.name + ": searching for best-static" + (clairvoyant ? " and clairvoyant" : "") + " (budget " +
        format("%.0f", scenario.searchSeconds) + " s)");
    outcome.search = searchStatic(config, scenario, options.probeSeconds);
    for (const auto& note : outcome.search->notes) say(scenario.name + ": " + note);
  }
  for (Mode mode : scenario.modes) {
    std::optional<FixedPlan> plan;
    switch (mode) {
      case Mode::Unfolded:
        plan = uniformPlan(vcpus, scenario);
        break;
      case Mode::StaticFair:
        plan = uniformPlan(staticFairSizes(scenario.pcpus, weights, vcpus), scenario);
        break;
      case Mode::AlwaysOne:
        plan = uniformPlan(ones, scenario);
        break;
      case Mode::BestStatic:
        if (outcome.search) plan = outcome.search->bestStatic;
        break;
      case Mode::Clairvoyant:
        if (outcome.search) plan = outcome.search->clairvoyant;
        break;
      case Mode::StealLaw:
      case Mode::Vcpufold:
        break;
    }
    if (!isControlled(mode) && !plan) continue;  // no search: nothing to run
    outcome.modes.push_back(mode);
    if (!plan) continue;
    // With one phase, clairvoyant's counts are best-static's: it shares their runs.
    outcome.plans[mode] = *plan;
    for (const auto& [other, otherPlan] : outcome.plans)
      if (other != mode && !outcome.sameAs.count(other) && normalised(otherPlan) == normalised(*plan)) {
        outcome.sameAs[mode] = other;
        break;
      }
  }
  if (outcome.search) {
    const bool phased = scenario.phased();
    outcome.targets = targetsPerPhase(scenario, phased ? outcome.search->clairvoyant : outcome.search->bestStatic);
    outcome.targetsFrom = phased ? "clairvoyant" : "best-static";
  } else {
    outcome.targets = targetsPerPhase(scenario, uniformPlan(staticFairSizes(scenario.pcpus, weights, vcpus), scenario));
    outcome.targetsFrom = "static-fair (no search in this run)";
  }

  const unsigned repetitions = repetitionsOf(scenario, options);
  outcome.repetitions = repetitions;
  for (unsigned repetition = 1; repetition <= repetitions; ++repetition)
    for (Mode mode : outcome.modes) {
      if (outcome.sameAs.count(mode)) continue;
      RunPlan plan{mode, std::nullopt};
      if (auto found = outcome.plans.find(mode); found != outcome.plans.end()) plan.fixed = found->second;
      outcome.runs.push_back(runOnce(config, scenario, plan, repetition));
      const auto& run = outcome.runs.back();
      std::string perVm;
      for (const auto& vm : run.vms)
        perVm += (perVm.empty() ? "" : " ") + format("%.0fk", vm.operationsPerSecond / 1000);
      say(scenario.name + " " + std::to_string(repetition) + "/" + std::to_string(repetitions) + " " + modeName(mode) +
          ": " + format("%.0fk", run.totalOperationsPerSecond() / 1000) + " ops/s (" + perVm + ")");
    }
  return outcome;
}

}  // namespace vcpufold::bench
