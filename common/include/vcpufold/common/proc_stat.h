// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// /proc/stat, read the same way on the host (per-CPU busy time, for the
// non-VM load) and in the guest (steal and runnable tasks).

#include <cstdint>
#include <map>
#include <string_view>

#include "vcpufold/common/expected.h"

namespace vcpufold {

// One "cpu" line, in USER_HZ ticks.
struct CpuTicks {
  std::uint64_t busy = 0;   // all but idle and iowait
  std::uint64_t total = 0;  // user nice system idle iowait irq softirq steal (guest time is inside user and nice)
  std::uint64_t steal = 0;
};

struct ProcStat {
  CpuTicks all;                         // the "cpu" line: every online CPU together
  std::map<unsigned, CpuTicks> perCpu;  // the "cpuN" lines: online CPUs only
  std::uint32_t procsRunning = 0;       // runnable tasks right now, the reader included
};

// Strict: digits only, sums that fit, CPU numbers below 65536. Fails when the
// "cpu" line, every "cpuN" line or "procs_running" is missing or malformed;
// other lines are ignored.
Expected<ProcStat> parseProcStat(std::string_view text);

}  // namespace vcpufold
