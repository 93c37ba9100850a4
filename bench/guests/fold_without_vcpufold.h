// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The fold without vcpufold: where a run measured both `compute` and
// `compute-folded` (the same unit, its loops folded into a cpuset of vCPU 0 by
// the workload itself) in modes unfolded and fixed, four paired ratios tell
// the fold's own cost from what vcpufold's agents and hostd add to it. Pure
// (unit-tested); the report and `--pool` both read it.

#include <string>
#include <vector>

#include "statistics.h"

namespace vcpufold::bench {

// One measurement: a workload in a mode, its throughput (units/s over the
// guests). `pair` names the repetition it belongs to (across pooled runs:
// the run and the repetition), so that ratios pair the measurements of one
// repetition only.
struct PairedMeasurement {
  std::string actuator, workload, mode;
  std::string pair;
  double throughput = 0;
};

struct PairedFigure {
  Estimate ratio;      // the median of the repetitions' own ratios, paired bootstrap interval
  unsigned below = 0;  // repetitions whose ratio is below 1
};

struct FoldWithoutVcpufold {
  std::string actuator;
  PairedFigure vcpufoldFoldOverSpread;  // compute: fixed / unfolded
  PairedFigure plainFoldOverSpread;     // compute-folded unfolded / compute unfolded
  PairedFigure vcpufoldFoldOverPlain;   // compute fixed / compute-folded unfolded
  PairedFigure plainBesideVcpufold;     // compute-folded: fixed / unfolded
  // For each compute-folded-N workload the run measured in mode unfolded:
  // the workload's own fold onto N vCPUs against spread, and against its
  // fold onto vCPU 0 alone.
  struct WiderFold {
    std::string workload;
    PairedFigure overSpread;   // compute-folded-N unfolded / compute unfolded
    PairedFigure overOneVcpu;  // compute-folded-N unfolded / compute-folded unfolded
  };
  std::vector<WiderFold> widerFolds;
};

// One row per actuator that measured compute and compute-folded in modes
// unfolded and fixed, in the order actuators are first seen.
std::vector<FoldWithoutVcpufold> foldWithoutVcpufold(const std::vector<PairedMeasurement>& measurements);
// A markdown table of those rows, with the reading of each ratio; empty
// when there is none.
std::string renderFoldWithoutVcpufold(const std::vector<FoldWithoutVcpufold>& rows);

}  // namespace vcpufold::bench
