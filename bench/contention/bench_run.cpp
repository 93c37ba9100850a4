// SPDX-License-Identifier: GPL-2.0-or-later
#include "bench_run.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <thread>

namespace vcpufold::bench {

namespace {

void sleepSeconds(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

std::string runDirectoryName(const std::string& scenario, Mode mode, unsigned repetition) {
  std::string name = scenario + "-" + modeName(mode) + "-" + std::to_string(repetition);
  std::replace(name.begin(), name.end(), '/', '-');
  return name;
}

const FixedPhase& phaseAt(const FixedPlan& plan, double at) {
  const FixedPhase* current = &plan.front();
  for (const auto& phase : plan)
    if (phase.from <= at + 1e-9) current = &phase;
  return *current;
}

void applySizes(const Fleet& fleet, const std::vector<unsigned>& sizes) {
  for (std::size_t i = 0; i < fleet.size(); ++i)
    if (fleet.spec(i).agent) fleet.setPreferred(i, sizes[i]);
}

}  // namespace

double warmupSeconds(const Scenario& scenario, Mode mode) {
  return isControlled(mode) ? scenario.warmupSeconds : std::min(scenario.warmupSeconds, 0.3);
}

double RunResult::totalOperationsPerSecond() const {
  double total = 0;
  for (const auto& vm : vms) total += vm.operationsPerSecond;
  return total;
}

double probeThroughput(Fleet& fleet, const std::vector<unsigned>& sizes, double settleSeconds, double seconds) {
  applySizes(fleet, sizes);
  sleepSeconds(settleSeconds);
  std::vector<VmStats> before;
  for (std::size_t i = 0; i < fleet.size(); ++i) before.push_back(readVmStats(fleet.file(i, ".stats")));
  sleepSeconds(seconds);
  double total = 0;
  for (std::size_t i = 0; i < fleet.size(); ++i) {
    const VmStats after = readVmStats(fleet.file(i, ".stats"));
    if (after.atNs > before[i].atNs)
      total += (after.operations - before[i].operations) * 1e9 / (after.atNs - before[i].atNs);
  }
  return total;
}

RunResult runOnce(const BenchConfig& config, const Scenario& scenario, const RunPlan& plan, unsigned repetition) {
  RunResult result;
  result.scenario = scenario.name;
  result.mode = plan.mode;
  result.repetition = repetition;
  result.warmupSeconds = warmupSeconds(scenario, plan.mode);
  Fleet fleet(config.binaries, config.workDirectory + "/" + runDirectoryName(scenario.name, plan.mode, repetition),
              scenario.vms, {.tickMs = config.tickMs, .pcpus = scenario.pcpus, .unfoldDelayMs = config.unfoldDelayMs});
  result.weightsApplied = fleet.weightsApplied();
  result.cpus = fleet.cpus();
  const long startedNs = monotonicNowNs();
  const FixedPhase* applied = nullptr;
  if (plan.fixed) {
    applied = &plan.fixed->front();
    applySizes(fleet, applied->sizes);
  }
  if (isControlled(plan.mode)) fleet.startAgents();
  if (plan.mode == Mode::Vcpufold) fleet.startHostd();
  sleepSeconds(result.warmupSeconds - static_cast<double>(monotonicNowNs() - startedNs) / 1e9);

  // The window: the bench moves every VM's demand along its schedule and, in
  // the clairvoyant mode, the counts with it, in the same pass.
  const long windowStart = monotonicNowNs();
  const std::size_t count = fleet.size();
  std::vector<unsigned> tasks(count);
  for (std::size_t i = 0; i < count; ++i) tasks[i] = tasksAt(scenario.vms[i].schedule, 0);
  std::vector<VmStats> first, last;
  for (std::size_t i = 0; i < count; ++i) first.push_back(readVmStats(fleet.file(i, ".stats")));
  last = first;
  result.vms.resize(count);
  double nextSample = config.sampleSeconds;
  for (;;) {
    const double now = static_cast<double>(monotonicNowNs() - windowStart) / 1e9;
    if (now >= scenario.durationSeconds) break;
    for (std::size_t i = 0; i < count; ++i)
      if (const unsigned want = tasksAt(scenario.vms[i].schedule, now); want != tasks[i]) {
        tasks[i] = want;
        fleet.setTasks(i, want);
      }
    if (plan.fixed)
      if (const FixedPhase& phase = phaseAt(*plan.fixed, now); &phase != applied) {
        applied = &phase;
        applySizes(fleet, phase.sizes);
      }
    if (now >= nextSample) {
      for (std::size_t i = 0; i < count; ++i) {
        const VmStats stats = readVmStats(fleet.file(i, ".stats"));
        const double seconds = (stats.atNs - last[i].atNs) / 1e9;
        result.vms[i].series.push_back(
            {now, seconds > 0 ? (stats.operations - last[i].operations) / seconds : 0.0, stats.preferred});
        last[i] = stats;
      }
      nextSample += config.sampleSeconds;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::vector<VmStats> end;
  for (std::size_t i = 0; i < count; ++i) end.push_back(readVmStats(fleet.file(i, ".stats")));
  const long windowEnd = monotonicNowNs();
  fleet.stop();
  // For whoever reads the run's logs: the window in the logs' clock.
  std::ofstream(fleet.directory() + "/window") << "start_ns " << windowStart << "\nend_ns " << windowEnd << "\n";
  result.windowSeconds = (end.front().atNs - first.front().atNs) / 1e9;

  for (std::size_t i = 0; i < count; ++i) {
    VmResult& vm = result.vms[i];
    vm.name = scenario.vms[i].name;
    const double seconds = (end[i].atNs - first[i].atNs) / 1e9;
    const double operations = end[i].operations - first[i].operations;
    const double run = end[i].runNs - first[i].runNs, wait = end[i].waitNs - first[i].waitNs;
    if (seconds > 0) {
      vm.operationsPerSecond = operations / seconds;
      vm.cpus = run / 1e9 / seconds;
      vm.contextSwitchesPerSecond = (end[i].contextSwitches - first[i].contextSwitches) / seconds;
    }
    vm.operationsPerCpuSecond = run > 0 ? operations / (run / 1e9) : 0;
    vm.delayRatio = run + wait > 0 ? wait / (run + wait) : 0;
    for (const auto& [at, value] : readTimeline(fleet.file(i, ".preferred.log"))) {
      const double relative = static_cast<double>(at - windowStart) / 1e9;
      if (vm.preferred.empty() || relative > -result.warmupSeconds)
        vm.preferred.push_back({std::max(relative, -result.warmupSeconds), value});
      else
        vm.preferred.back().count = value;
    }
  }
  return result;
}

}  // namespace vcpufold::bench
