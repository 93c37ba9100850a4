// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// CLOCK_MONOTONIC in nanoseconds: the time base of samples that are compared
// with each other (steal per wall time, back-off deadlines, restart
// detection); wall-clock steps must not move it.

#include <chrono>
#include <cstdint>

namespace vcpufold {

std::int64_t monotonicNs();

inline std::int64_t monotonicMs() { return monotonicNs() / 1'000'000; }

// The one time type of the pure parts that take time as an argument (the
// agent's controller, demand watch, knob quarantine, actuators; the protocol
// session): a point on CLOCK_MONOTONIC, which is what steady_clock reads on
// Linux, so it lines up with monotonicNs() and protocol::SessionTime.
using MonotonicTime = std::chrono::steady_clock::time_point;
inline MonotonicTime monotonicNow() { return std::chrono::steady_clock::now(); }

}  // namespace vcpufold
