// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// CLOCK_MONOTONIC in nanoseconds: the time base of samples that are compared
// with each other (steal per wall time, back-off deadlines, restart
// detection); wall-clock steps must not move it.

#include <cstdint>

namespace vcpufold {

std::int64_t monotonicNs();

inline std::int64_t monotonicMs() { return monotonicNs() / 1'000'000; }

}  // namespace vcpufold
