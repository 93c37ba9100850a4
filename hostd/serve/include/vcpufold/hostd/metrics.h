// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The Prometheus text exposition (format 0.0.4) of hostd's state. Names follow
// Prometheus conventions with the vcpufold_ prefix: base units (seconds,
// CPUs), _total for counters. docs/hostd.md lists every metric.

#include <string>
#include <vector>

#include "vcpufold/hostd/agent_state.h"
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

// What the daemon counts across ticks: the faults it met and held through.
struct DaemonCounters {
  std::uint64_t inputsMissingTotal = 0;         // decisions taken on missing inputs (held or withdrawn)
  std::uint64_t hintsWithdrawnTotal = 0;        // of those, past the hold: no VM hinted
  std::uint64_t snapshotsLateTotal = 0;         // ticks that found the inventory snapshot too old
  std::uint64_t eventDecisionsTotal = 0;        // decisions between ticks: a demand report, an unfold falling due
  std::uint64_t eventDecisionsRefusedTotal = 0; // demand reports past their VM's budget: left to the tick
  double snapshotAgeSeconds = 0.0;              // age of the newest inventory snapshot
  std::uint64_t metricsConnectionsEvicted = 0;  // metrics clients closed to stay within the cap
  std::uint64_t metricsAcceptErrors = 0;        // accept() failures (EMFILE and the like)
  std::uint64_t textPagesRendered = 0;          // metrics pages and status tables rendered (at most one each per decision)
  bool metricsListening = true;
};

// What the daemon is: its build, when it started, its tick and its last reload.
struct DaemonFacts {
  std::string version;
  double startTimeSeconds = 0.0;     // since the Unix epoch
  double tickIntervalSeconds = 0.0;  // hostd.interval_ms in force
  bool lastReloadSuccessful = true;  // the last SIGHUP's file validated (true before any)
  double lastReloadSuccessTimeSeconds = 0.0;  // the last configuration taken: start or a reload
};

std::string renderMetrics(const TickReport& report, const TickDurationHistogram& tickDuration,
                          const DaemonCounters& counters = {}, const DaemonFacts& facts = {});

}  // namespace vcpufold::hostd
