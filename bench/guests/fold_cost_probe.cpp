// SPDX-License-Identifier: GPL-2.0-or-later
#include "fold_cost_probe.h"

#include <cstdio>
#include <stdexcept>

namespace vcpufold::bench {

namespace {

// One unit one way; its seconds as the guest's clock measured them.
double unitSeconds(GuestLab& lab, const char* way, unsigned unitSize) {
  // A unit takes 3-10 s under TCG; ten minutes means the guest is gone.
  const std::string said = lab.run(0, "sh /lab/foldcost " + std::string(way) + " " + std::to_string(unitSize), 600'000);
  try {
    const double seconds = std::stod(said);
    if (seconds > 0) return seconds;
  } catch (const std::exception&) {
  }
  throw std::runtime_error(std::string("the ") + way + " compute unit did not give its time: " + said);
}

}  // namespace

std::vector<FoldCostPair> probeFoldCost(const GuestLabSpec& spec, unsigned pairs, unsigned unitSize) {
  GuestLab lab(spec);
  const std::string kernel = lab.kernelRelease();
  std::vector<FoldCostPair> results;
  for (unsigned repetition = 1; repetition <= pairs; ++repetition) {
    FoldCostPair pair{kernel, repetition, 0, 0};
    if (spreadRunsFirst(repetition)) {
      pair.spreadSeconds = unitSeconds(lab, "spread", unitSize);
      pair.foldedSeconds = unitSeconds(lab, "folded", unitSize);
    } else {
      pair.foldedSeconds = unitSeconds(lab, "folded", unitSize);
      pair.spreadSeconds = unitSeconds(lab, "spread", unitSize);
    }
    std::printf("fold cost %s %u/%u: spread %.2f s, folded %.2f s\n", kernel.c_str(), repetition, pairs,
                pair.spreadSeconds, pair.foldedSeconds);
    std::fflush(stdout);
    results.push_back(pair);
  }
  return results;
}

}  // namespace vcpufold::bench
