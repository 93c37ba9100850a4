// SPDX-License-Identifier: GPL-2.0-or-later
#include "static_search.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <sstream>

namespace vcpufold::bench {

namespace {

constexpr double kSettleSeconds = 0.3;
constexpr double kMinimumGain = 1.03;

std::string describe(const std::vector<unsigned>& sizes) {
  std::ostringstream out;
  for (std::size_t i = 0; i < sizes.size(); ++i) out << (i ? "/" : "") << sizes[i];
  return out.str();
}

std::string describe(const std::vector<unsigned>& tasks, const char* unit) { return describe(tasks) + " " + unit; }

double elapsedSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Moves of one VM's count: +-1, and halving or doubling on VMs of 8 vCPUs or more.
std::vector<std::vector<unsigned>> neighbours(const std::vector<unsigned>& sizes, const Scenario& scenario,
                                              const std::vector<unsigned>& tasks) {
  std::vector<std::vector<unsigned>> result;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const VmSpec& vm = scenario.vms[i];
    if (!vm.agent || tasks[i] == 0) continue;
    std::set<unsigned> counts{sizes[i] + 1, sizes[i] - 1};
    if (vm.vcpus >= 8) counts.insert({sizes[i] * 2, (sizes[i] + 1) / 2});
    for (unsigned count : counts) {
      if (count < 1 || count > vm.vcpus || count == sizes[i]) continue;
      auto next = sizes;
      next[i] = count;
      result.push_back(next);
    }
  }
  return result;
}

}  // namespace

StaticSearch searchStatic(const BenchConfig& config, const Scenario& scenario, double probeSeconds) {
  const auto started = std::chrono::steady_clock::now();
  StaticSearch search;
  const auto phases = scenario.phases();
  // Distinct demands and how long the schedule spends at each.
  std::vector<std::vector<unsigned>> demands;
  std::vector<double> durations;
  for (const auto& phase : phases) {
    const auto found = std::find(demands.begin(), demands.end(), phase.tasks);
    if (found == demands.end()) {
      demands.push_back(phase.tasks);
      durations.push_back(phase.to - phase.from);
    } else {
      durations[static_cast<std::size_t>(found - demands.begin())] += phase.to - phase.from;
    }
  }
  std::vector<double> weights;
  std::vector<unsigned> vcpus;
  for (const auto& vm : scenario.vms) {
    weights.push_back(vm.weight);
    vcpus.push_back(vm.vcpus);
  }
  std::vector<unsigned> start = staticFairSizes(scenario.pcpus, weights, vcpus);
  for (std::size_t i = 0; i < start.size(); ++i)
    if (!scenario.vms[i].agent) start[i] = scenario.vms[i].vcpus;

  // measured[d][counts]: total ops/s at demand d.
  std::vector<std::map<std::vector<unsigned>, double>> measured(demands.size());
  std::vector<std::vector<unsigned>> best(demands.size(), start);
  const double budgetPerDemand = scenario.searchSeconds / static_cast<double>(demands.size());
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
    const double rate = probeThroughput(fleet, sizes, kSettleSeconds, probeSeconds);
    ++search.candidatesTried;
    measured[d][sizes] = rate;
    return rate;
  };

  for (std::size_t d = 0; d < demands.size(); ++d) {
    const auto demandStarted = std::chrono::steady_clock::now();
    withFleetAt(d, [&](Fleet& fleet) {
      double bestRate = probe(fleet, d, start);
      for (;;) {
        std::vector<unsigned> bestMove;
        double bestMoveRate = 0;
        bool outOfTime = false;
        for (const auto& candidate : neighbours(best[d], scenario, demands[d])) {
          if (elapsedSince(demandStarted) + probeSeconds + kSettleSeconds > budgetPerDemand) {
            outOfTime = true;
            break;
          }
          const double rate = probe(fleet, d, candidate);
          if (rate > bestMoveRate) {
            bestMoveRate = rate;
            bestMove = candidate;
          }
        }
        if (!bestMove.empty() && bestMoveRate > bestRate * kMinimumGain) {
          best[d] = bestMove;
          bestRate = bestMoveRate;
          if (!outOfTime) continue;
        }
        search.budgetSpent = search.budgetSpent || outOfTime;
        break;
      }
      search.notes.push_back("demand " + describe(demands[d], "tasks") + ": best counts " + describe(best[d]) + " (" +
                             std::to_string(measured[d].size()) + " tried)");
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
  if (demands.size() > 1)
    for (std::size_t d = 0; d < demands.size(); ++d)
      withFleetAt(d, [&](Fleet& fleet) {
        for (const auto& sizes : candidates) probe(fleet, d, sizes);
      });
  std::vector<unsigned> bestStatic = start;
  double bestTotal = -1;
  for (const auto& sizes : candidates) {
    double total = 0;
    for (std::size_t d = 0; d < demands.size(); ++d) total += durations[d] * measured[d][sizes];
    if (total > bestTotal) {
      bestTotal = total;
      bestStatic = sizes;
    }
  }
  search.bestStatic = {{0.0, bestStatic}};
  search.seconds = elapsedSince(started);
  search.notes.push_back("best-static " + describe(bestStatic) + "; " + std::to_string(search.candidatesTried) +
                         " measurements in " + std::to_string(static_cast<int>(search.seconds + 0.5)) + " s" +
                         (search.budgetSpent ? " (stopped by the time budget)" : ""));
  return search;
}

}  // namespace vcpufold::bench
