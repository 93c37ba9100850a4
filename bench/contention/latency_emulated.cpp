// SPDX-License-Identifier: GPL-2.0-or-later
#include <chrono>
#include <random>
#include <thread>

#include "latency_runs.h"
#include "latency_stages.h"

namespace vcpufold::bench {

LatencyTable measureEmulatedLatency(const FleetBinaries& binaries, const LatencyOptions& options) {
  const unsigned tickMs = options.tickMs;
  std::vector<VmSpec> vms(2);
  vms[0].name = "vm-a";
  vms[0].workload = "compute";
  vms[0].schedule = Schedule{Schedule::Kind::Constant, 2};
  vms[1].name = "vm-b";
  vms[1].workload = "compute";
  vms[1].schedule = Schedule{Schedule::Kind::Constant, 0};
  const unsigned folded = 1;  // vm-a's share against a busy vm-b on 2 pCPUs, rounded up
  Fleet fleet(binaries, options.work, vms, FleetOptions{tickMs, 2});
  fleet.startAgents();
  fleet.startHostd();
  const auto countOfA = [&] {
    const auto timeline = readTimeline(fleet.file(0, ".preferred.log"));
    return timeline.empty() ? 0u : timeline.back().second;
  };
  const auto waitFor = [&](auto wanted, unsigned ticks) {
    return testing::waitUntil([&] { return wanted(countOfA()); }, static_cast<int>(ticks * tickMs), 5);
  };
  const auto isFolded = [&](unsigned count) { return count == folded; };
  const auto isUnfolded = [&](unsigned count) { return count > folded; };
  std::this_thread::sleep_for(std::chrono::milliseconds(4 * tickMs));  // hinted, acknowledged, statuses in
  std::mt19937 random(1);
  unsigned foldsSeen = 0, unfoldsSeen = 0;
  for (unsigned round = 0; round < options.repetitions; ++round) {
    waitFor(isUnfolded, 10);
    // Each change at a random point of the tick, as demand changes come.
    std::this_thread::sleep_for(std::chrono::milliseconds(200 + random() % tickMs));
    fleet.setTasks(1, 4);
    if (waitFor(isFolded, 10)) ++foldsSeen;
    std::this_thread::sleep_for(std::chrono::milliseconds(200 + random() % tickMs));
    fleet.setTasks(1, 0);
    if (waitFor(isUnfolded, 10)) ++unfoldsSeen;
  }
  fleet.stop();

  std::vector<DemandChange> changes;
  const auto tasksOfB = readTimeline(fleet.file(1, ".tasks.log"));
  for (std::size_t index = 1; index < tasksOfB.size(); ++index)  // the first line is the VM's start
    changes.push_back({static_cast<double>(tasksOfB[index].first) / 1e6, tasksOfB[index].second > 0});
  const auto split = splitIntoStages(changes, readDecisionTimes(fleet.directory() + "/hostd.log"),
                                     readAgentHints(fleet.file(0, ".agent.log")),
                                     readEarlyStatusTimes(fleet.file(1, ".agent.log")), folded);
  LatencyTable table;
  table.text = "emulated VMs: demand change to applied mask, ms; hostd tick " + std::to_string(tickMs) +
               " ms, unfold delay 1000 ms (hostd's defaults); " + std::to_string(foldsSeen) + " folds and " +
               std::to_string(unfoldsSeen) + " unfolds seen; logs in " + options.work + "\n" +
               describeStages("fold", split.fold, options.repetitions) +
               describeStages("unfold", split.unfold, options.repetitions);
  table.bothDirectionsTimed = !split.fold.total.empty() && !split.unfold.total.empty();
  return table;
}

}  // namespace vcpufold::bench
