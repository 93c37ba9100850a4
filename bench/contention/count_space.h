// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The fixed counts a search may try at one demand, and the searches over
// them. Pure: a search asks a measuring function for the throughput of a
// candidate and never measures the same candidate twice, so the tests drive it
// with a model and the bench with emulated VMs.
//
// The space: each VM's count ranges over [low, high] (a VM without an agent or
// without tasks is fixed: low == high). The bench sets high to the smaller of
// the VM's vCPUs and its tasks, because preferred vCPUs beyond the tasks only
// halt. VMs that are identical at this demand (same vCPUs, SMT, weight,
// workload, agent and tasks) form a symmetry class: swapping their counts
// changes nobody's throughput but their own, and the total not at all, so
// only one ordering is tried (counts non-increasing in the class's VM order).
//
// Searches:
//   exhaustive   every distinct assignment, when there are at most `limit`
//   descent      from a start, the best move (one VM +-1, or halved or doubled
//                on VMs of 8 vCPUs or more) while it gains at least 3%
//   multi-start  descents from several starts, the best end kept

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace vcpufold::bench {

struct CountRange {
  unsigned low = 1, high = 1;
  unsigned symmetryClass = 0;  // VMs of one class are interchangeable; a class of its own otherwise
  bool bigSteps = false;       // halving and doubling are moves too (VMs of 8 vCPUs or more)
};

// How many distinct assignments the space has after symmetry; counting stops
// above `cap` (returns cap + 1), since the product can be astronomic.
std::size_t distinctAssignments(const std::vector<CountRange>& space, std::size_t cap);
// Every distinct assignment, each in its canonical order (lexicographic).
std::vector<std::vector<unsigned>> enumerateAssignments(const std::vector<CountRange>& space);
// The canonical representative of an assignment: counts within each class
// sorted non-increasing in the class's positions.
std::vector<unsigned> canonical(const std::vector<CountRange>& space, std::vector<unsigned> counts);
// An assignment clamped into the space (each count into its range).
std::vector<unsigned> clampedInto(const std::vector<CountRange>& space, std::vector<unsigned> counts);

// Throughput (any unit; higher is better) of one assignment.
using MeasureCounts = std::function<double(const std::vector<unsigned>&)>;

struct CountSearch {
  std::vector<unsigned> best;
  double bestRate = 0;
  bool exhaustive = false;
  bool budgetSpent = false;  // a descent stopped for want of measurements
  unsigned measurements = 0;
  // Where a descent from the first start ended, and its rate. Beside an
  // exhaustive search it is the whole descent of earlier versions (replayed
  // over the measurements); among several starts it had only its share.
  std::vector<unsigned> descentEnd;
  double descentRate = 0;
  // Every candidate measured, with its rate (canonical form), best first.
  std::vector<std::pair<std::vector<unsigned>, double>> ranked;
};

// Searches one demand's space: exhaustively when it has at most
// `exhaustiveLimit` assignments and they fit in `maxMeasurements`, otherwise
// by descents from each of `starts` in turn (clamped into the space), sharing
// `maxMeasurements`. starts must not be empty.
CountSearch searchCounts(const std::vector<CountRange>& space, const std::vector<std::vector<unsigned>>& starts,
                         const MeasureCounts& measure, unsigned maxMeasurements, std::size_t exhaustiveLimit);

}  // namespace vcpufold::bench
