// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/demand_watch.h"

namespace vcpufold::agent {

std::optional<double> DemandWatch::onSample(double tasks, MonotonicTime now) {
  sum_ += tasks;
  ++samples_;
  if (!reported_) return std::nullopt;  // the first periodic status sets the level
  const double away = tasks - *reported_;
  const int direction = away >= config_.threshold ? 1 : away <= -config_.threshold ? -1 : 0;
  if (direction == 0 || direction != direction_) {
    direction_ = direction;
    sameWay_ = direction == 0 ? 0 : 1;
    confirmingSum_ = direction == 0 ? 0 : tasks;
  } else {
    ++sameWay_;
    confirmingSum_ += tasks;
  }
  if (sameWay_ < config_.confirmSamples) return std::nullopt;
  if (lastEarly_ && now - *lastEarly_ < config_.minGap) return std::nullopt;
  // The new level: the mean of the samples that confirmed it.
  const double level = confirmingSum_ / sameWay_;
  lastEarly_ = now;
  reported_ = level;
  direction_ = 0;
  sameWay_ = 0;
  confirmingSum_ = 0;
  sum_ = 0;
  samples_ = 0;
  return level;
}

std::optional<double> DemandWatch::takePeriodic() {
  if (samples_ == 0) return reported_;
  const double mean = sum_ / samples_;
  sum_ = 0;
  samples_ = 0;
  reported_ = mean;
  direction_ = 0;  // changes are counted from the new level
  sameWay_ = 0;
  confirmingSum_ = 0;
  return mean;
}

}  // namespace vcpufold::agent
