// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The contention bench's report: the Markdown that bench/run.sh puts into
// docs/performance.md (targets and their verdicts, where vcpufold does not
// help, one section per scenario), and the raw CSV beside it.

#include <string>
#include <vector>

#include "outcome.h"

namespace vcpufold::bench {

struct ReportContext {
  std::string machine;
  std::string command;
  std::string commit;
  std::string date;
  unsigned tickMs = 1000;
  unsigned repetitions = 5;
  double seconds = 0;              // the whole run
  std::vector<std::string> plots;  // image files
  std::string imagePrefix;         // where the report finds them ("images/" in docs/)
  // The standard set's targets and its list of where vcpufold does not help;
  // a random run gives its own spread and losses (random_summary.h).
  bool standardSummary = true;
};

std::string markdownReport(const ReportContext& context, const std::vector<ScenarioOutcome>& outcomes);
// One row per (scenario, mode, repetition, VM).
std::string runsCsv(const std::vector<ScenarioOutcome>& outcomes);
// One row per (scenario, mode, repetition, VM, sample) of the phased scenarios.
std::string seriesCsv(const std::vector<ScenarioOutcome>& outcomes);

}  // namespace vcpufold::bench
