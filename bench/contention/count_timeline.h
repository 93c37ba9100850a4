// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A VM's preferred vCPU count over a run, as the bench reads it from the
// emulated VM's log: the count from `at` seconds on (window-relative, the
// warm-up negative; the first entry is the count the run started with).

#include <vector>

namespace vcpufold::bench {

struct CountChange {
  double at = 0;
  unsigned count = 0;
};
using CountTimeline = std::vector<CountChange>;

inline unsigned countAt(const CountTimeline& timeline, double at) {
  unsigned count = timeline.empty() ? 0 : timeline.front().count;
  for (const auto& change : timeline)
    if (change.at <= at) count = change.count;
  return count;
}

}  // namespace vcpufold::bench
