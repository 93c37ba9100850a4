#pragma once
// The Prometheus text exposition (format 0.0.4) of hostd's state. Names follow
// Prometheus conventions with the vcpufold_ prefix: base units (seconds,
// CPUs), _total for counters. docs/hostd.md lists every metric.

#include <string>
#include <vector>

#include "vcpufold/hostd/tick.h"

namespace vcpufold::hostd {

// Buckets of the tick-duration histogram, in seconds.
inline constexpr double kTickDurationBuckets[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0};

struct TickDurationHistogram {
  std::vector<std::uint64_t> bucketCounts = std::vector<std::uint64_t>(std::size(kTickDurationBuckets), 0);
  std::uint64_t count = 0;
  double sum = 0.0;
  void observe(double seconds);
};

std::string renderMetrics(const TickReport& report, const TickDurationHistogram& tickDuration);

}  // namespace vcpufold::hostd
