// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/common/log_throttle.h"

namespace vcpufold {

bool LogThrottle::allow(Clock::time_point now) {
  reportSuppressed_ = 0;
  if (!windowStart_ || now - *windowStart_ >= window_) {
    windowStart_ = now;
    linesInWindow_ = 0;
  }
  if (linesInWindow_ >= linesPerWindow_) {
    ++suppressedPending_;
    ++suppressedTotal_;
    return false;
  }
  ++linesInWindow_;
  reportSuppressed_ = suppressedPending_;
  suppressedPending_ = 0;
  return true;
}

}  // namespace vcpufold
