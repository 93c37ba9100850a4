#pragma once
// One run of the contention bench: a scenario's emulated VMs, with one
// workload, under one mode (nothing, the agents' steal law alone, hostd and
// the agents, or the oracle's static sizes), measured over a window.

#include <optional>
#include <string>
#include <vector>

#include "guest_workload.h"
#include "scenarios.h"

namespace vcpufold::bench {

struct BenchConfig {
  std::string emulatedVm, agent, hostd;  // binaries
  std::string workDirectory;             // run directories go here
  unsigned warmupSeconds = 6;            // before the window (steady scenarios)
  unsigned stepAfterSeconds = 8;         // load-step scenario: the step comes this long after start
  unsigned measureSeconds = 10;          // the window
  unsigned tickMs = 1000;                // hostd's tick and the agents' interval (upstream's default)
  double pcpus = 2;                      // the host CPUs the VMs share
};

struct VmResult {
  std::string name;
  double operationsPerSecond = 0;
  double delayRatio = 0;          // run-queue wait / (run + wait) of its vCPU threads in the window
  unsigned preferredChanges = 0;  // changes of its preferred vCPU count in the window
  unsigned preferredAtEnd = 0;
  std::optional<double> secondsToSize;  // load step: from the step until its count first equals the oracle's
};

struct RunResult {
  std::string scenario;
  std::string workload;
  Mode mode = Mode::Unfolded;
  double windowSeconds = 0;
  std::vector<VmResult> vms;
  bool weightsApplied = false;  // the host CPU groups took the weights
  double totalOperationsPerSecond() const;
  double meanDelayRatio() const;
  double preferredChangesPerMinute() const;
  // Load step: ticks until every VM holds its oracle size (nullopt: some never did).
  std::optional<double> ticksToConverge(unsigned tickMs) const;
};

RunResult runOnce(const BenchConfig& config, const Scenario& scenario, WorkloadKind workload, Mode mode);

}  // namespace vcpufold::bench
