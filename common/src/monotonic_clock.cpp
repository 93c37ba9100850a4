// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/common/monotonic_clock.h"

#include <time.h>

namespace vcpufold {

std::int64_t monotonicNs() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

}  // namespace vcpufold
