// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Pools the paired repetitions of several vcpufold-bench-guests runs
// (`--pool`): each run's results.csv, every repetition a pair (or triple) of
// modes measured back to back, so repetitions from different runs pool as
// they are. One run's five repetitions give a wide interval; the default
// rule (guest-agent.md) also reads the pooled one.

#include <string>
#include <vector>

#include "fold_without_vcpufold.h"
#include "statistics.h"

namespace vcpufold::bench {

struct PooledRow {
  std::string actuator, workload;
  unsigned runs = 0;              // runs that measured this cell
  Estimate vcpufoldOverUnfolded;  // paired over every pooled repetition
  Estimate fixedOverUnfolded;
  // Paired over the repetitions that ran both: the target "vcpufold / fixed
  // >= 0.95" (hostd's own counts against the same fold held fixed), which one
  // run's five repetitions rarely settle.
  Estimate vcpufoldOverFixed;
  unsigned vcpufoldBelowUnfolded = 0;  // repetitions whose vcpufold / unfolded < 1
};

// `csvs`: the text of each run's results.csv (columns actuator, workload,
// mode, repetition, ..., units_per_s_all_guests; one row per guest). Throws
// on a file without those columns or with a malformed row. Rows in the
// order each cell is first seen.
std::vector<PooledRow> poolGuestRuns(const std::vector<std::string>& csvs);
// Every measurement of those files, its pair named by the run (its place in
// `csvs`) and the repetition. Throws as poolGuestRuns does.
std::vector<PairedMeasurement> readGuestRuns(const std::vector<std::string>& csvs);
std::string renderPooled(const std::vector<PooledRow>& rows, const std::vector<std::string>& sources);

}  // namespace vcpufold::bench
