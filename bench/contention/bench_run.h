// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// One run of the contention bench: a scenario's emulated VMs under one mode
// (fixed counts the bench sets, or the agents with or without hostd), warmed
// up, then measured over the scenario's window while the bench drives every
// VM's demand schedule.

#include <optional>
#include <string>
#include <vector>

#include "count_timeline.h"
#include "fleet.h"
#include "modes.h"
#include "scenario_file.h"

namespace vcpufold::bench {

struct BenchConfig {
  FleetBinaries binaries;
  std::string workDirectory;   // run directories go here
  unsigned tickMs = 1000;      // hostd's tick and the agents' interval (the defaults)
  double sampleSeconds = 0.5;  // the time series' step
  std::optional<unsigned> unfoldDelayMs{};  // hostd's unfold_delay_ms; none: its default
};

struct RunPlan {
  Mode mode = Mode::Unfolded;
  std::optional<FixedPlan> fixed;  // the counts of a mode the bench sets itself
};

struct SeriesPoint {
  double at = 0;                   // window-relative seconds
  double operationsPerSecond = 0;  // since the previous point
  unsigned preferred = 0;
};

struct VmResult {
  std::string name;
  double operationsPerSecond = 0;
  double cpus = 0;  // CPU-seconds its vCPU threads ran (schedstat) per window second
  double operationsPerCpuSecond = 0;
  double delayRatio = 0;  // run-queue wait / (run + wait) of its vCPU threads
  double contextSwitchesPerSecond = 0;
  CountTimeline preferred;
  std::vector<SeriesPoint> series;
};

// Controlled modes warm up for the scenario's warm-up, so that the daemons
// have started and acted; fixed counts need only their first change applied (0.3 s).
double warmupSeconds(const Scenario& scenario, Mode mode);

struct RunResult {
  std::string scenario;
  Mode mode = Mode::Unfolded;
  unsigned repetition = 0;
  double warmupSeconds = 0, windowSeconds = 0;
  std::vector<VmResult> vms;
  bool weightsApplied = false;  // the host CPU groups took the weights
  std::string cpus;             // the pCPUs the VMs shared
  double totalOperationsPerSecond() const;
};

// Throws std::runtime_error when the fleet cannot be started.
RunResult runOnce(const BenchConfig& config, const Scenario& scenario, const RunPlan& plan, unsigned repetition);

// Total ops/s of a running fleet with fixed counts, over `seconds` after `settleSeconds` (the search's probe).
double probeThroughput(Fleet& fleet, const std::vector<unsigned>& sizes, double settleSeconds, double seconds);

}  // namespace vcpufold::bench
