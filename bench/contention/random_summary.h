// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// What a random run (scenario_random.h) found, over all its scenarios: the
// spread of vcpufold's ratios to steal-law and best-static, and every loss.
// Pure: ratios in, figures and Markdown out.

#include <optional>
#include <string>
#include <vector>

#include "statistics.h"

namespace vcpufold::bench {

// One scenario's paired ratios of vcpufold's total throughput to each mode
// (statistics.h: per-repetition ratios, resampled over repetitions).
struct RandomScenarioRatios {
  std::string scenario;
  std::string shape;  // "3 VMs on 2 pCPUs, ...": what it was
  std::optional<Estimate> versusUnfolded, versusStealLaw, versusStaticFair, versusBestStatic;
};

// Min, quartiles (linear interpolation between order statistics) and max of
// the scenarios' median ratios, and the median's 95% interval over scenarios.
struct Spread {
  unsigned scenarios = 0;
  double min = 0, lowerQuartile = 0, median = 0, upperQuartile = 0, max = 0;
  Estimate medianEstimate;
};
Spread spreadOf(const std::vector<double>& values);

// Where vcpufold loses: its interval wholly below 1.00 against unfolded,
// steal-law or static-fair, or wholly below 0.97 against best-static (a
// limit it is held to within 3%).
struct Loss {
  std::string scenario;
  std::string against;  // the mode
  Estimate ratio;
  double bar = 1.0;
};
inline constexpr double kBestStaticBar = 0.97;
std::vector<Loss> lossesOf(const std::vector<RandomScenarioRatios>& ratios);

struct RandomRunText {
  unsigned seed = 0;
  std::string lossDirectory;  // where each loss's scenario file was written (relative to the report)
};
std::string randomSummaryMarkdown(const RandomRunText& run, const std::vector<RandomScenarioRatios>& ratios);

}  // namespace vcpufold::bench
