#include "bench_run.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <thread>

#include "fleet.h"

namespace vcpufold::bench {

namespace {

struct VmStats {
  double operations = 0, runNs = 0, waitNs = 0;
};

VmStats readStats(const std::string& path) {
  VmStats stats;
  std::ifstream file(path);
  std::string key;
  double value = 0;
  while (file >> key >> value) {
    if (key == "operations") stats.operations = value;
    if (key == "run_ns") stats.runNs = value;
    if (key == "wait_ns") stats.waitNs = value;
  }
  return stats;
}

std::vector<unsigned> tasksOf(const Scenario& scenario, bool afterStep) {
  std::vector<unsigned> tasks;
  for (const auto& vm : scenario.vms) tasks.push_back(afterStep ? vm.tasksAfter : vm.tasksBefore);
  return tasks;
}

}  // namespace

double RunResult::totalOperationsPerSecond() const {
  double total = 0;
  for (const auto& vm : vms) total += vm.operationsPerSecond;
  return total;
}

double RunResult::meanDelayRatio() const {
  double total = 0;
  for (const auto& vm : vms) total += vm.delayRatio;
  return vms.empty() ? 0 : total / static_cast<double>(vms.size());
}

double RunResult::preferredChangesPerMinute() const {
  double changes = 0;
  for (const auto& vm : vms) changes += vm.preferredChanges;
  return windowSeconds > 0 ? changes * 60 / windowSeconds : 0;
}

std::optional<double> RunResult::ticksToConverge(unsigned tickMs) const {
  double worst = 0;
  for (const auto& vm : vms) {
    if (!vm.secondsToSize) return std::nullopt;
    worst = std::max(worst, *vm.secondsToSize);
  }
  return worst * 1000 / tickMs;
}

RunResult runOnce(const BenchConfig& config, const Scenario& scenario, WorkloadKind workload, Mode mode) {
  RunResult result;
  result.scenario = scenario.name;
  result.workload = workload == WorkloadKind::Spinlock ? "spinlock" : "compute";
  result.mode = mode;
  Fleet fleet({config.emulatedVm, config.agent, config.hostd},
              config.workDirectory + "/" + scenario.name + "-" + result.workload + "-" + modeName(mode), scenario.vms,
              result.workload, config.tickMs);
  result.weightsApplied = fleet.weightsApplied();
  const auto applyOracle = [&](bool afterStep) {
    const auto sizes = oracleSizes(scenario.vms, tasksOf(scenario, afterStep), config.pcpus);
    for (std::size_t i = 0; i < sizes.size(); ++i) fleet.setPreferred(i, sizes[i]);
  };
  if (mode == Mode::Oracle) applyOracle(false);
  if (mode == Mode::StealLaw || mode == Mode::Vcpufold) fleet.startAgents();
  if (mode == Mode::Vcpufold) fleet.startHostd();

  long windowStart = 0;
  if (scenario.loadStep) {
    std::this_thread::sleep_for(std::chrono::seconds(config.stepAfterSeconds));
    for (std::size_t i = 0; i < scenario.vms.size(); ++i) fleet.setTasks(i, scenario.vms[i].tasksAfter);
    windowStart = monotonicNowNs();
    if (mode == Mode::Oracle) applyOracle(true);
  } else {
    std::this_thread::sleep_for(std::chrono::seconds(config.warmupSeconds));
    windowStart = monotonicNowNs();
  }
  std::vector<VmStats> before;
  for (std::size_t i = 0; i < fleet.size(); ++i) before.push_back(readStats(fleet.file(i, ".stats")));
  std::this_thread::sleep_for(std::chrono::seconds(config.measureSeconds));
  std::vector<VmStats> after;
  for (std::size_t i = 0; i < fleet.size(); ++i) after.push_back(readStats(fleet.file(i, ".stats")));
  const long windowEnd = monotonicNowNs();
  result.windowSeconds = static_cast<double>(windowEnd - windowStart) / 1e9;
  fleet.stop();

  // The load step's goal for every VM: the oracle's size after the step.
  const auto targets = oracleSizes(scenario.vms, tasksOf(scenario, true), config.pcpus);
  for (std::size_t i = 0; i < scenario.vms.size(); ++i) {
    VmResult vm;
    vm.name = scenario.vms[i].name;
    vm.operationsPerSecond = (after[i].operations - before[i].operations) / result.windowSeconds;
    const double run = after[i].runNs - before[i].runNs, wait = after[i].waitNs - before[i].waitNs;
    vm.delayRatio = run + wait > 0 ? wait / (run + wait) : 0;
    const auto timeline = readTimeline(fleet.file(i, ".preferred.log"));
    unsigned atStart = scenario.vms[i].vcpus;
    for (const auto& [at, count] : timeline) {
      if (at <= windowStart) atStart = count;
      if (at > windowStart && at <= windowEnd) ++vm.preferredChanges;
      if (at <= windowEnd) vm.preferredAtEnd = count;
    }
    if (atStart == targets[i]) {
      vm.secondsToSize = 0.0;
    } else {
      for (const auto& [at, count] : timeline)
        if (at > windowStart && at <= windowEnd && count == targets[i]) {
          vm.secondsToSize = static_cast<double>(at - windowStart) / 1e9;
          break;
        }
    }
    result.vms.push_back(vm);
  }
  return result;
}

}  // namespace vcpufold::bench
