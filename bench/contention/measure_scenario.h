// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Everything the bench does for one scenario: the search for best-static and
// clairvoyant (when asked for), the fixed counts of each mode (a mode whose
// counts equal an earlier one's shares its runs rather than measuring the
// same thing twice), then the repetitions, every mode once per repetition
// (A B C A B C ...).

#include <functional>
#include <string>

#include "outcome.h"

namespace vcpufold::bench {

struct MeasureOptions {
  unsigned repetitions = 5;
  bool repetitionsGiven = false;                     // on the command line: it overrides the scenario's own
  bool search = true;                                // false: best-static and clairvoyant are left out
  double probeSeconds = 1.0;                         // each search candidate's measurement
  std::function<void(const std::string&)> progress;  // one line per step
};

// Throws std::runtime_error when a fleet cannot be started.
// The runs of every mode a scenario gets under these options.
unsigned repetitionsOf(const Scenario& scenario, const MeasureOptions& options);

ScenarioOutcome measureScenario(const BenchConfig& config, const Scenario& scenario, const MeasureOptions& options);

}  // namespace vcpufold::bench
