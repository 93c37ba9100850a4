// SPDX-License-Identifier: GPL-2.0-or-later
#include "scenario_random.h"

#include <gtest/gtest.h>

#include <set>

#include "guest_workload.h"

using namespace vcpufold::bench;

namespace {

RandomBounds fourCpus() {
  RandomBounds bounds;
  bounds.maxPcpus = 4;
  return bounds;
}

// What a draw made of its VMs and pCPUs, names aside.
std::string vmsOf(const Scenario& scenario) {
  std::string text = std::to_string(scenario.pcpus);
  for (const auto& vm : scenario.vms)
    text += " " + std::to_string(vm.vcpus) + "/" + std::to_string(vm.threadsPerCore) + "/" + std::to_string(vm.weight) +
            "/" + vm.workload + "/" + scheduleText(vm.schedule) + (vm.agent ? "" : "/-");
  return text;
}

}  // namespace

TEST(RandomScenarios, TheSameSeedDrawsTheSameScenariosAndAnotherSeedOthers) {
  const auto first = drawScenarios(20, 7, fourCpus());
  const auto again = drawScenarios(20, 7, fourCpus());
  const auto other = drawScenarios(20, 8, fourCpus());
  ASSERT_EQ(first.size(), 20u);
  unsigned differing = 0;
  for (std::size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(scenarioFileText(first[i]), scenarioFileText(again[i]));
    if (vmsOf(first[i]) != vmsOf(other[i])) ++differing;
  }
  EXPECT_GE(differing, 19u);
  // A draw does not depend on how many are drawn.
  EXPECT_EQ(scenarioFileText(drawScenarios(4, 7, fourCpus())[3]), scenarioFileText(first[3]));
  EXPECT_EQ(first[3].name, "random-7-4");
}

TEST(RandomScenarios, DrawsStayWithinTheStatedBoundsAndCoverThem) {
  std::set<unsigned> vmCounts, pcpus, vcpus;
  std::set<std::string> kinds;
  std::set<Schedule::Kind> schedules;
  bool smt = false, mix = false, agentless = false, idle = false;
  for (const auto& scenario : drawScenarios(300, 11, fourCpus())) {
    ASSERT_GE(scenario.vms.size(), 2u);
    ASSERT_LE(scenario.vms.size(), 6u);
    ASSERT_GE(scenario.pcpus, 1u);
    ASSERT_LE(scenario.pcpus, 4u);
    vmCounts.insert(static_cast<unsigned>(scenario.vms.size()));
    pcpus.insert(scenario.pcpus);
    unsigned agents = 0;
    for (const auto& vm : scenario.vms) {
      ASSERT_GE(vm.vcpus, 1u);
      ASSERT_LE(vm.vcpus, 16u);
      ASSERT_EQ(vm.vcpus % vm.threadsPerCore, 0u);
      ASSERT_GE(vm.weight, 25.0);
      ASSERT_LE(vm.weight, 400.0);
      ASSERT_EQ(static_cast<int>(vm.weight) % 25, 0);
      std::vector<WorkloadKind> parsed;
      ASSERT_TRUE(parseWorkloadMix(vm.workload, parsed)) << vm.workload;
      for (auto kind : parsed) kinds.insert(workloadKindName(kind));
      mix = mix || parsed.size() > 1;
      smt = smt || vm.threadsPerCore == 2;
      agents += vm.agent ? 1 : 0;
      agentless = agentless || !vm.agent;
      vcpus.insert(vm.vcpus);
      schedules.insert(vm.schedule.kind);
      for (double t = 0; t < scenario.durationSeconds; t += 0.25) {
        const unsigned tasks = tasksAt(vm.schedule, t);
        ASSERT_LE(tasks, vm.vcpus + vm.vcpus / 2);
        idle = idle || tasks == 0;
      }
    }
    ASSERT_GE(agents, 1u) << scenario.name;
    std::set<std::vector<unsigned>> demands;
    for (const auto& phase : scenario.phases()) demands.insert(phase.tasks);
    ASSERT_LE(demands.size(), 4u) << scenario.name;
  }
  EXPECT_EQ(vmCounts, (std::set<unsigned>{2, 3, 4, 5, 6}));
  EXPECT_EQ(pcpus, (std::set<unsigned>{1, 2, 3, 4}));
  EXPECT_TRUE(vcpus.count(1) && vcpus.count(16));
  EXPECT_EQ(kinds, (std::set<std::string>{"compute", "spinlock", "pvspinlock", "message"}));
  EXPECT_EQ(schedules.size(), 4u);
  EXPECT_TRUE(smt);
  EXPECT_TRUE(mix);
  EXPECT_TRUE(agentless);
  EXPECT_TRUE(idle);
}

TEST(RandomScenarios, EveryDrawnFileLoadsBackToTheSameScenario) {
  for (const auto& drawn : drawScenarios(100, 3, fourCpus())) {
    std::string error;
    const auto parsed = parseScenarioFile(scenarioFileText(drawn), drawn.name + ".toml", error);
    ASSERT_TRUE(parsed) << error << "\n" << scenarioFileText(drawn);
    ASSERT_EQ(parsed->size(), 1u);
    const Scenario& read = parsed->front();
    EXPECT_EQ(read.name, drawn.name);
    EXPECT_EQ(read.description, drawn.description);
    EXPECT_EQ(read.pcpus, drawn.pcpus);
    EXPECT_DOUBLE_EQ(read.warmupSeconds, drawn.warmupSeconds);
    EXPECT_DOUBLE_EQ(read.durationSeconds, drawn.durationSeconds);
    EXPECT_DOUBLE_EQ(read.searchSeconds, drawn.searchSeconds);
    EXPECT_EQ(read.modes, drawn.modes);
    ASSERT_EQ(read.vms.size(), drawn.vms.size());
    for (std::size_t i = 0; i < read.vms.size(); ++i) {
      EXPECT_EQ(read.vms[i].name, drawn.vms[i].name);
      EXPECT_EQ(read.vms[i].vcpus, drawn.vms[i].vcpus);
      EXPECT_EQ(read.vms[i].threadsPerCore, drawn.vms[i].threadsPerCore);
      EXPECT_DOUBLE_EQ(read.vms[i].weight, drawn.vms[i].weight);
      EXPECT_EQ(read.vms[i].workload, drawn.vms[i].workload);
      EXPECT_EQ(read.vms[i].agent, drawn.vms[i].agent);
      EXPECT_EQ(scheduleText(read.vms[i].schedule), scheduleText(drawn.vms[i].schedule));
      for (double t = 0; t < drawn.durationSeconds; t += 0.1)
        ASSERT_EQ(tasksAt(read.vms[i].schedule, t), tasksAt(drawn.vms[i].schedule, t));
    }
    EXPECT_EQ(read.phases().size(), drawn.phases().size());
  }
}

TEST(RandomScenarios, ScheduleTextReadsBack) {
  std::string error;
  for (const char* text : {"constant:0", "step:3,1,2.5", "square:8,2,10", "walk:2,0,6,1.5,123456"}) {
    const auto schedule = parseSchedule(text, error);
    ASSERT_TRUE(schedule) << error;
    EXPECT_EQ(scheduleText(*schedule), text);
  }
}
