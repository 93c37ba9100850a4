// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// What the bench found for one scenario: the runs of every mode, the fixed
// counts it used, its search, and the figures derived from the runs
// (fairness, dynamics) that the report and the plots print.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench_run.h"
#include "dynamics.h"
#include "modes.h"
#include "scenario_file.h"
#include "static_search.h"
#include "statistics.h"

namespace vcpufold::bench {

struct ScenarioOutcome {
  Scenario scenario;
  std::vector<Mode> modes;          // as asked, in order
  std::map<Mode, FixedPlan> plans;  // the counts of the modes the bench sets
  std::map<Mode, Mode> sameAs;      // a mode whose counts equal an earlier one's shares its runs
  std::optional<StaticSearch> search;
  std::vector<std::vector<unsigned>> targets;  // per phase, for the dynamics
  std::string targetsFrom;                     // "clairvoyant", "best-static" or "static-fair (no search)"
  std::vector<RunResult> runs;
  unsigned repetitions = 0;  // runs of every mode

  // The runs that stand for `mode` (its own, or those of the mode it is the same as).
  std::vector<const RunResult*> runsOf(Mode mode) const;
  bool has(Mode mode) const;
  std::vector<double> totals(Mode mode) const;
  // Total ops/s of each repetition of `mode`.
  std::map<unsigned, double> totalsByRepetition(Mode mode) const;
  // Largest relative deviation of a VM's CPU share from its max-min weighted
  // share (VMs with tasks); none for phased scenarios.
  std::optional<double> fairnessOf(const RunResult& run) const;
  Dynamics dynamicsOf(const RunResult& run, double tickSeconds) const;
};

// vcpufold's (or any mode's) throughput over `base`'s, paired by repetition:
// every repetition runs each mode back to back, so the per-repetition ratio
// cancels the machine's drift between repetitions. None if either is missing.
std::optional<Estimate> pairedRatioOf(const ScenarioOutcome& outcome, Mode mode, Mode base);

}  // namespace vcpufold::bench
