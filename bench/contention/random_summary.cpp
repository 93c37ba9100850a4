// SPDX-License-Identifier: GPL-2.0-or-later
#include "random_summary.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace vcpufold::bench {

namespace {

std::string two(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", value);
  return text;
}

// A table cell: the ratio, or "-" where the scenario did not run that mode.
std::string cell(const std::optional<Estimate>& estimate) { return estimate ? ratioText(*estimate) : "-"; }

double quantile(const std::vector<double>& sorted, double q) {
  const double at = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(at);
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (at - static_cast<double>(below));
}

void spreadRow(std::ostringstream& out, const std::string& name, const std::vector<double>& values) {
  out << "| " << name << " | ";
  if (values.empty()) {
    out << "0 | - | - | - | - | - |\n";
    return;
  }
  const Spread spread = spreadOf(values);
  out << spread.scenarios << " | " << two(spread.min) << " | " << two(spread.lowerQuartile) << " | "
      << two(spread.median) << " [" << two(spread.medianEstimate.low) << ", " << two(spread.medianEstimate.high)
      << "] | " << two(spread.upperQuartile) << " | " << two(spread.max) << " |\n";
}

}  // namespace

Spread spreadOf(const std::vector<double>& values) {
  Spread spread;
  if (values.empty()) return spread;
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  spread.scenarios = static_cast<unsigned>(sorted.size());
  spread.min = sorted.front();
  spread.max = sorted.back();
  spread.lowerQuartile = quantile(sorted, 0.25);
  spread.median = quantile(sorted, 0.5);
  spread.upperQuartile = quantile(sorted, 0.75);
  spread.medianEstimate = estimateMedian(sorted);
  return spread;
}

std::vector<Loss> lossesOf(const std::vector<RandomScenarioRatios>& ratios) {
  std::vector<Loss> losses;
  for (const auto& scenario : ratios) {
    const auto check = [&](const std::optional<Estimate>& ratio, const char* against, double bar) {
      if (ratio && ratio->samples >= 2 && ratio->high < bar)
        losses.push_back({scenario.scenario, against, *ratio, bar});
    };
    check(scenario.versusUnfolded, "unfolded", 1.0);
    check(scenario.versusStealLaw, "steal-law", 1.0);
    check(scenario.versusStaticFair, "static-fair", 1.0);
    check(scenario.versusBestStatic, "best-static", kBestStaticBar);
  }
  return losses;
}

std::string randomSummaryMarkdown(const RandomRunText& run, const std::vector<RandomScenarioRatios>& ratios) {
  std::ostringstream out;
  std::vector<double> stealLaw, bestStatic;
  for (const auto& scenario : ratios) {
    if (scenario.versusStealLaw) stealLaw.push_back(scenario.versusStealLaw->median);
    if (scenario.versusBestStatic) bestStatic.push_back(scenario.versusBestStatic->median);
  }
  out << "#### Random scenarios (seed " << run.seed << ", " << ratios.size() << " drawn)\n\n"
      << "Each scenario's ratio is the median of its per-repetition ratios (modes run back to back in each "
         "repetition), with a 95% interval from resampling repetitions. Below, the spread of those medians over the "
         "scenarios; the median's interval resamples scenarios.\n\n"
      << "| vcpufold / | scenarios | min | lower quartile | median | upper quartile | max |\n"
      << "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  spreadRow(out, "steal-law", stealLaw);
  spreadRow(out, "best-static", bestStatic);
  out << "\n| scenario | what | vs unfolded | vs steal-law | vs static-fair | vs best-static |\n"
      << "| --- | --- | ---: | ---: | ---: | ---: |\n";
  for (const auto& scenario : ratios)
    out << "| `" << scenario.scenario << "` | " << scenario.shape << " | " << cell(scenario.versusUnfolded) << " | "
        << cell(scenario.versusStealLaw) << " | " << cell(scenario.versusStaticFair) << " | "
        << cell(scenario.versusBestStatic) << " |\n";
  const auto losses = lossesOf(ratios);
  out << "\n**Losses** (an interval wholly below 1.00 against unfolded, steal-law or static-fair, or below "
      << two(kBestStaticBar) << " against best-static): ";
  if (losses.empty()) {
    out << "none in this run.\n";
    return out.str();
  }
  out << losses.size() << ".\n\n";
  for (const auto& loss : losses)
    out << "- `" << loss.scenario << "`: vcpufold / " << loss.against << " " << ratioText(loss.ratio) << " (bar "
        << two(loss.bar) << "); reproduce with `--scenario " << run.lossDirectory << "/" << loss.scenario
        << ".toml`.\n";
  return out.str();
}

}  // namespace vcpufold::bench
