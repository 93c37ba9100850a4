// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Times in the agent's unit tests: milliseconds from an arbitrary origin, as
// the agent's one time type (MonotonicTime) that its pure parts take.

#include <chrono>
#include <cstdint>

#include "vcpufold/common/monotonic_clock.h"

inline vcpufold::MonotonicTime at(std::int64_t ms) { return vcpufold::MonotonicTime{} + std::chrono::milliseconds(ms); }
