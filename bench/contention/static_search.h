// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// best-static and clairvoyant, found by measuring. For each distinct demand
// of the scenario (each phase's task counts) the VMs run at that demand with
// fixed counts, and count_space searches them: every distinct assignment when
// there are at most kExhaustiveLimit of them and the budget allows, otherwise
// descents from several starts (static-fair, always-1, unfolded, each VM at
// its demand, a seeded random start), the best kept. The few best candidates
// are then measured again, for as long as the schedule spends at the demand
// (at least two probes' time), and the best of those wins, so one lucky
// probe cannot make the limit.
// clairvoyant: each phase at its demand's best counts. best-static: of the
// demands' best counts and static-fair, the one with the most throughput over
// the whole schedule (each demand weighted by its time). Nothing here asks
// hostd; the idle VMs' counts are left where they started (they use nothing).

#include <cstddef>
#include <string>
#include <vector>

#include "bench_run.h"
#include "count_space.h"
#include "search_space.h"

namespace vcpufold::bench {

struct DemandSearch {
  std::vector<unsigned> tasks;
  std::size_t space = 0;  // distinct assignments (kExhaustiveLimit + 1: more)
  CountSearch search;
  std::vector<unsigned> best;  // after the full-length confirmation
  unsigned confirmed = 0;      // candidates measured again for longer
};

struct StaticSearch {
  FixedPlan bestStatic;
  FixedPlan clairvoyant;
  std::vector<DemandSearch> demands;
  unsigned candidatesTried = 0;  // (counts, demand) pairs measured
  double seconds = 0;
  bool budgetSpent = false;        // a descent stopped for want of budget
  std::vector<std::string> notes;  // what it tried and found, for the page
};

// probeSeconds: how long each candidate is measured (after a short settle).
StaticSearch searchStatic(const BenchConfig& config, const Scenario& scenario, double probeSeconds = 1.0);

}  // namespace vcpufold::bench
