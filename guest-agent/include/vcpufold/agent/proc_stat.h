#pragma once
// The parts of /proc/stat the agent uses: steal and runnable tasks.

#include <cstdint>
#include <string_view>

#include "vcpufold/common/expected.h"

namespace vcpufold::agent {

struct ProcStatSample {
  std::uint64_t stealTicks = 0;   // "cpu" line, 8th value, in USER_HZ ticks
  unsigned cpusReporting = 0;     // "cpuN" lines: /proc/stat lists online CPUs only
  std::uint32_t procsRunning = 0; // runnable tasks right now, the reader included
};

// Fails when the "cpu" line or "procs_running" is missing or malformed.
Expected<ProcStatSample> parseProcStat(std::string_view text);

}  // namespace vcpufold::agent
