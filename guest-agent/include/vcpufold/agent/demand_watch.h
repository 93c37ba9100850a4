// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// When the guest's demand changes, the host should hear of it at once, not at
// the end of the agent's interval: the host can only re-decide on what it has
// heard. DemandWatch takes each sample of runnable tasks (/proc/loadavg's running count,
// the agent itself excluded) and says when to send a `status` now:
//   - the demand has moved by at least `threshold` tasks from the level last
//     reported, the same way, in `confirmSamples` samples in a row (one odd
//     sample is noise, not a change);
//   - and no such report went out in the last `minGap` (a rate cap, so that
//     a guest whose load swings every sample costs the host at most one
//     status per minGap).
// The periodic status carries the mean since the last report of either kind,
// so after a change it says the new level, not an average across the change.
// Pure: samples and times in, decisions out.

#include <chrono>
#include <optional>

#include "vcpufold/common/monotonic_clock.h"

namespace vcpufold::agent {

struct DemandWatchConfig {
  double threshold = 1.0;  // tasks
  unsigned confirmSamples = 2;
  std::chrono::milliseconds minGap{100};  // at most 10 early reports a second
};

class DemandWatch {
 public:
  explicit DemandWatch(DemandWatchConfig config = {}) : config_(config) {}

  // A sample of runnable tasks at now: the demand to report at once, if any.
  std::optional<double> onSample(double tasks, MonotonicTime now);
  // The demand the periodic status says (the mean since the last report), and
  // the start of a new mean; none when there was no sample since.
  std::optional<double> takePeriodic();
  // The level the host was last told (for logs and tests).
  std::optional<double> lastReported() const { return reported_; }

 private:
  DemandWatchConfig config_;
  std::optional<double> reported_;
  unsigned sameWay_ = 0;  // consecutive samples away from reported_ in one direction
  int direction_ = 0;     // +1 up, -1 down
  double confirmingSum_ = 0;
  std::optional<MonotonicTime> lastEarly_;
  double sum_ = 0;  // since the last report
  unsigned samples_ = 0;
};

}  // namespace vcpufold::agent
