// SPDX-License-Identifier: GPL-2.0-or-later
#include "static_search.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <sstream>

#include "bench_text.h"

namespace vcpufold::bench {

namespace {

// Candidates measured again for longer: the best few, if within this
// fraction of the best probe (a probe's noise is a few per cent).
constexpr std::size_t kConfirmAtMost = 3;
constexpr double kConfirmWithin = 0.95;

std::string describe(const std::vector<unsigned>& sizes) {
  std::ostringstream out;
  for (std::size_t i = 0; i < sizes.size(); ++i) out << (i ? "/" : "") << sizes[i];
  return out.str();
}

double elapsedSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The seed of a demand's random start: the scenario's name and the demand's
// index (FNV-1a, the same on every machine).
std::uint32_t startSeed(const std::string& name, std::size_t demand) {
  std::uint32_t hash = 2166136261u;
  for (char c : name + "#" + std::to_string(demand)) hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
  return hash;
}

}  // namespace

StaticSearch searchStatic(const BenchConfig& config, const Scenario& scenario, double probeSeconds) {
  const auto started = std::chrono::steady_clock::now();
  StaticSearch search;
  const auto phases = scenario.phases();
  const auto plans = planSearch(scenario, probeSeconds);
  std::vector<std::vector<unsigned>> demands;
  std::vector<double> durations;
  for (const auto& plan : plans) {
    demands.push_back(plan.tasks);
    durations.push_back(plan.seconds);
  }
  const std::vector<unsigned> start = staticFairStart(scenario);

  // measured[d][counts]: total ops/s at demand d (probe length).
  std::vector<std::map<std::vector<unsigned>, double>> measured(demands.size());
  std::vector<std::vector<unsigned>> best(demands.size(), start);
  const auto withFleetAt = [&](std::size_t d, const auto& body) {
    Scenario fixedDemand = scenario;
    for (std::size_t i = 0; i < fixedDemand.vms.size(); ++i)
      fixedDemand.vms[i].schedule = Schedule{Schedule::Kind::Constant, demands[d][i]};
    std::string directory = config.workDirectory + "/" + scenario.name + "-search-" + std::to_string(d);
    std::replace(directory.begin() + static_cast<long>(config.workDirectory.size()) + 1, directory.end(), '/', '-');
    Fleet fleet(config.binaries, directory, fixedDemand.vms, {config.tickMs, scenario.pcpus});
    body(fleet);
  };
  const auto probe = [&](Fleet& fleet, std::size_t d, const std::vector<unsigned>& sizes) {
    if (auto known = measured[d].find(sizes); known != measured[d].end()) return known->second;
    const double rate = probeThroughput(fleet, sizes, kProbeSettleSeconds, probeSeconds);
    ++search.candidatesTried;
    measured[d][sizes] = rate;
    return rate;
  };

  for (std::size_t d = 0; d < demands.size(); ++d) {
    withFleetAt(d, [&](Fleet& fleet) {
      DemandSearch demand;
      demand.tasks = demands[d];
      demand.space = plans[d].space;
      demand.search = searchCounts(
          searchSpaceOf(scenario, demands[d], start),
          searchStarts(scenario, demands[d], start, startSeed(scenario.name, d)),
          [&](const std::vector<unsigned>& sizes) { return probe(fleet, d, sizes); }, plans[d].maxMeasurements,
          kExhaustiveLimit);
      search.budgetSpent = search.budgetSpent || demand.search.budgetSpent;
      // The best few again, for as long as the schedule spends at this demand
      // (at least two probes' time): a probe is short and noisy.
      const double confirmSeconds = std::max(plans[d].seconds, 2 * probeSeconds);
      double bestFull = -1;
      demand.best = demand.search.best;
      for (const auto& [sizes, rate] : demand.search.ranked) {
        if (demand.confirmed == kConfirmAtMost || rate < demand.search.bestRate * kConfirmWithin) break;
        const double full = probeThroughput(fleet, sizes, kProbeSettleSeconds, confirmSeconds);
        ++demand.confirmed;
        if (full > bestFull) {
          bestFull = full;
          demand.best = sizes;
        }
      }
      best[d] = demand.best;
      std::string note = "demand " + describe(demands[d]) + " tasks: ";
      note += demand.search.exhaustive
                  ? "all " + std::to_string(demand.space) + " distinct assignments measured"
                  : std::string("descents from 5 starts over ") +
                        (demand.space > kExhaustiveLimit ? "more than " + std::to_string(kExhaustiveLimit)
                                                         : std::to_string(demand.space)) +
                        " assignments, " + std::to_string(demand.search.measurements) + " measured";
      note += "; best " + describe(demand.best) + " (of " + std::to_string(demand.confirmed) + " measured again for " +
              format("%.1f s", confirmSeconds) + ")";
      // Only beside an exhaustive search is the descent the old one (replayed
      // over every measurement); among five starts it had a fifth of the budget.
      if (demand.search.exhaustive && !demand.search.descentEnd.empty() && demand.search.bestRate > 0)
        note += "; the descent from static-fair alone ends at " + describe(demand.search.descentEnd) + ", " +
                format("%.2f", demand.search.descentRate / demand.search.bestRate) + " of the best probe";
      search.notes.push_back(note);
      search.demands.push_back(std::move(demand));
    });
  }

  // clairvoyant: each phase at its demand's best.
  for (const auto& phase : phases) {
    const auto d = static_cast<std::size_t>(std::find(demands.begin(), demands.end(), phase.tasks) - demands.begin());
    search.clairvoyant.push_back({phase.from, best[d]});
  }
  // best-static: the candidate with the most throughput over the schedule.
  std::vector<std::vector<unsigned>> candidates{start};
  for (const auto& sizes : best)
    if (std::find(candidates.begin(), candidates.end(), sizes) == candidates.end()) candidates.push_back(sizes);
  std::vector<unsigned> bestStatic = best.front();
  if (demands.size() > 1) {
    for (std::size_t d = 0; d < demands.size(); ++d)
      withFleetAt(d, [&](Fleet& fleet) {
        for (const auto& sizes : candidates) probe(fleet, d, sizes);
      });
    double bestTotal = -1;
    for (const auto& sizes : candidates) {
      double total = 0;
      for (std::size_t d = 0; d < demands.size(); ++d) total += durations[d] * measured[d][sizes];
      if (total > bestTotal) {
        bestTotal = total;
        bestStatic = sizes;
      }
    }
  }
  search.bestStatic = {{0.0, bestStatic}};
  search.seconds = elapsedSince(started);
  search.notes.push_back(
      "best-static " + describe(bestStatic) + "; " + std::to_string(search.candidatesTried) + " probes of " +
      format("%.1f", probeSeconds) + " s in " + std::to_string(static_cast<int>(search.seconds + 0.5)) + " s (budget " +
      format("%.0f", scenario.searchSeconds) + " s for the probes, plus the longer checks of the best)" +
      (search.budgetSpent ? "; a descent stopped for want of budget" : ""));
  return search;
}

}  // namespace vcpufold::bench
