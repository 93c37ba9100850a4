// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// What the best-static search of a scenario may try at one demand, and where
// its descents start (count_space.h searches it). Pure.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "count_space.h"
#include "scenario_file.h"

namespace vcpufold::bench {

// At most this many distinct assignments are searched exhaustively.
inline constexpr std::size_t kExhaustiveLimit = 200;

// The space of one demand: VMs without an agent fixed at their vCPUs, idle
// VMs (no tasks) at `idleCounts`, the others 1..min(vCPUs, tasks); VMs alike
// in everything the throughput depends on (vCPUs, SMT, weight, workload,
// agent, tasks) share a symmetry class.
std::vector<CountRange> searchSpaceOf(const Scenario& scenario, const std::vector<unsigned>& tasks,
                                      const std::vector<unsigned>& idleCounts);
// The starts of a multi-start search, in order: static-fair, always-1,
// unfolded, each VM at its demand, and a random one drawn from `seed`
// (the same seed, the same start).
std::vector<std::vector<unsigned>> searchStarts(const Scenario& scenario, const std::vector<unsigned>& tasks,
                                                const std::vector<unsigned>& staticFair, std::uint32_t seed);

// A probe's settle time before it measures (the counts' change applied).
inline constexpr double kProbeSettleSeconds = 0.3;

// The search a scenario gets, before anything runs: its distinct demands (a
// phase's task counts; phases at the same demand share it), the time the
// schedule spends at each, the size of each one's space, and whether the
// budget lets it be searched exhaustively (search_s shared by the demands,
// probeSeconds + kProbeSettleSeconds a measurement).
struct DemandPlan {
  std::vector<unsigned> tasks;
  double seconds = 0;
  std::size_t space = 0;  // distinct assignments; kExhaustiveLimit + 1 means more
  unsigned maxMeasurements = 0;
  bool exhaustive = false;
};
std::vector<DemandPlan> planSearch(const Scenario& scenario, double probeSeconds);
// Static-fair counts of the scenario (VMs without an agent at all their vCPUs): the search's first start.
std::vector<unsigned> staticFairStart(const Scenario& scenario);

}  // namespace vcpufold::bench
