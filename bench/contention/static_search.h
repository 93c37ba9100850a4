// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// best-static and clairvoyant, found by measuring: for each distinct demand
// of the scenario (each phase's task counts), the VMs run at that demand with
// fixed counts, and a coordinate descent from static-fair (one VM's count up
// or down by one, or halved or doubled on large VMs) keeps the best total
// throughput until no move gains more than 3% or the time budget is spent.
// clairvoyant: each phase at its demand's best counts. best-static: of the
// demands' best counts and static-fair, the one with the most throughput over
// the whole schedule (each demand weighted by its time). Nothing here asks
// hostd; the idle VMs' counts are left where they started (they use nothing).

#include <string>
#include <vector>

#include "bench_run.h"

namespace vcpufold::bench {

struct StaticSearch {
  FixedPlan bestStatic;
  FixedPlan clairvoyant;
  unsigned candidatesTried = 0;  // (counts, demand) pairs measured
  double seconds = 0;
  bool budgetSpent = false;        // stopped by the budget rather than by finding no better move
  std::vector<std::string> notes;  // what it tried and found, for the page
};

// probeSeconds: how long each candidate is measured (after a short settle).
StaticSearch searchStatic(const BenchConfig& config, const Scenario& scenario, double probeSeconds = 1.0);

}  // namespace vcpufold::bench
