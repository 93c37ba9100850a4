// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The guest's own folding law when no host hint is valid: upstream Linux's
// steal_governor, in user space, with two corrections: the ratio divides by
// the CPUs that report (online), not the possible ones, so a guest started
// with spare hotplug slots is not diluted; and it moves along the placement
// plan's core order, so it shares the placement rules.

#include <cstddef>
#include <cstdint>

#include "vcpufold/common/monotonic_clock.h"
#include "vcpufold/common/proc_stat.h"

namespace vcpufold::agent {

struct StealLawConfig {
  std::uint32_t intervalMs = 1000;  // 100..100000
  std::uint32_t highBp = 500;       // steal above this (basis points): drop one core
  std::uint32_t lowBp = 200;        // at or below this: add one core back; low < high < 10000
};

struct StealReading {
  std::uint64_t stealTicks = 0;   // the "cpu" line's steal, in USER_HZ ticks
  std::size_t cpusReporting = 0;  // the "cpuN" lines: /proc/stat lists online CPUs only
  MonotonicTime readAt;           // when it was read
};
StealReading stealReadingOf(const ProcStat& stat, MonotonicTime readAt);

// Steal over the interval in basis points of the time the online CPUs had:
// delta(steal ns) * 10000 / (delta(wall ns) * online CPUs), clamped to 0..10000.
// A counter that went backwards (reset) reads as 0.
std::uint32_t stealRatioBp(const StealReading& previous, const StealReading& current, long ticksPerSecond);

enum class FoldStep { FoldOneCore, UnfoldOneCore, Hold };
FoldStep stealLawStep(const StealLawConfig& config, std::uint32_t stealBp);

// The core count after a step, within 1..totalCores.
std::size_t coresAfterStep(FoldStep step, std::size_t cores, std::size_t totalCores);

}  // namespace vcpufold::agent
