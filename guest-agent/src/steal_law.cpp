// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/steal_law.h"

#include <algorithm>

namespace vcpufold::agent {

StealReading stealReadingOf(const ProcStat& stat, MonotonicTime readAt) {
  return StealReading{stat.all.steal, stat.perCpu.size(), readAt};
}

std::uint32_t stealRatioBp(const StealReading& previous, const StealReading& current, long ticksPerSecond) {
  if (current.stealTicks < previous.stealTicks || ticksPerSecond <= 0) return 0;
  const double stealNs =
      static_cast<double>(current.stealTicks - previous.stealTicks) * 1e9 / static_cast<double>(ticksPerSecond);
  const auto wall = std::chrono::duration_cast<std::chrono::nanoseconds>(current.readAt - previous.readAt);
  const double wallNs = static_cast<double>(std::max<std::int64_t>(wall.count(), 0));
  const double capacity = std::max(wallNs * static_cast<double>(current.cpusReporting) / 10000.0, 1.0);
  return static_cast<std::uint32_t>(std::clamp(stealNs / capacity, 0.0, 10000.0));
}

FoldStep stealLawStep(const StealLawConfig& config, std::uint32_t stealBp) {
  if (stealBp > config.highBp) return FoldStep::FoldOneCore;
  if (stealBp <= config.lowBp) return FoldStep::UnfoldOneCore;
  return FoldStep::Hold;
}

std::size_t coresAfterStep(FoldStep step, std::size_t cores, std::size_t totalCores) {
  if (totalCores == 0) return 0;
  cores = std::clamp<std::size_t>(cores, 1, totalCores);
  if (step == FoldStep::FoldOneCore && cores > 1) return cores - 1;
  if (step == FoldStep::UnfoldOneCore && cores < totalCores) return cores + 1;
  return cores;
}

}  // namespace vcpufold::agent
