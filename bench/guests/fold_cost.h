// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The fold-cost probe of vcpufold-bench-guests (--fold-cost PAIRS): how much
// compute a guest does per pCPU second with its four loops folded onto one
// vCPU against spread over all of them. One guest, confined by the host to
// one pCPU, so both ways get the same CPU time and any difference is the
// guest's side of folding (its scheduler, timer and context switches under
// TCG), without the host's scheduling of several guests that the main bench
// measures with it.

#include <string>
#include <vector>

namespace vcpufold::bench {

struct FoldCostPair {
  std::string kernel;  // the guest's `uname -r`
  unsigned repetition = 0;
  double spreadSeconds = 0;  // the compute unit with its loops on every vCPU
  double foldedSeconds = 0;  // the same unit with its loops in a cpuset of one vCPU
};

// Which way runs first in repetition `repetition` (from 1): alternating, so
// neither way always follows the other (or the boot).
bool spreadRunsFirst(unsigned repetition);

// kernel,repetition,spread_s,folded_s: one row per pair.
std::string foldCostCsv(const std::vector<FoldCostPair>& pairs);
// The CSV back (throws on a malformed row): the report recomputes from it.
std::vector<FoldCostPair> readFoldCostCsv(const std::string& csv);

struct FoldCostReportInput {
  std::string machine, commit, date, command;
  unsigned vcpus = 0, unitSize = 0;
  std::vector<FoldCostPair> pairs;
};
// A markdown table per kernel: folded / spread work per pCPU second (the
// median of the per-pair ratios, paired 95% bootstrap interval), each way's
// median unit, the pairs whose folded unit was the slower, and the reading.
std::string renderFoldCost(const FoldCostReportInput& input);

}  // namespace vcpufold::bench
