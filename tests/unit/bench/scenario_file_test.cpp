// SPDX-License-Identifier: GPL-2.0-or-later
#include "scenario_file.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace vcpufold::bench;

namespace {

std::vector<Scenario> parseOk(const std::string& text) {
  std::string error;
  auto parsed = parseScenarioFile(text, "test.toml", error);
  EXPECT_TRUE(parsed) << error;
  return parsed ? *parsed : std::vector<Scenario>{};
}

std::string parseError(const std::string& text) {
  std::string error;
  EXPECT_FALSE(parseScenarioFile(text, "test.toml", error));
  return error;
}

}  // namespace

TEST(ScenarioFile, ReadsVmsCopiesAndDefaults) {
  const auto scenarios = parseOk(
      "pcpus = 3\nduration_s = 6\nrepetitions = 15\n[[vm]]\nname = \"web\"\ncount = 2\nvcpus = 8\nthreads_per_core = "
      "2\n"
      "weight = 300\nworkload = \"spinlock+compute\"\nschedule = \"square:8,2,10\"\n"
      "[[vm]]\nname = \"db\"\nworkload = \"compute\"\nagent = false\n");
  ASSERT_EQ(scenarios.size(), 1u);
  const Scenario& scenario = scenarios[0];
  EXPECT_EQ(scenario.name, "test");
  EXPECT_EQ(scenario.pcpus, 3u);
  EXPECT_EQ(scenario.repetitions, 15u);
  ASSERT_EQ(scenario.vms.size(), 3u);
  EXPECT_EQ(scenario.vms[0].name, "web-1");
  EXPECT_EQ(scenario.vms[1].name, "web-2");
  EXPECT_EQ(scenario.vms[1].threadsPerCore, 2u);
  EXPECT_EQ(scenario.vms[1].weight, 300);
  EXPECT_EQ(scenario.vms[2].name, "db");
  EXPECT_FALSE(scenario.vms[2].agent);
  EXPECT_EQ(tasksAt(scenario.vms[2].schedule, 100), 4u) << "default: every vCPU busy";
  EXPECT_EQ(scenario.modes.size(), std::size(kAllModes));
  EXPECT_FALSE(parseOk("[[vm]]\nname = \"a\"\nworkload = \"compute\"\n").at(0).repetitions)
      << "none: the command line's (5 by default)";
}

TEST(ScenarioFile, WorkloadsMakeOneScenarioEach) {
  const auto scenarios = parseOk(
      "name = \"steady\"\nworkloads = [\"spinlock\", \"compute\"]\n[[vm]]\nname = \"a\"\n[[vm]]\nname = \"b\"\n"
      "workload = \"message\"\n");
  ASSERT_EQ(scenarios.size(), 2u);
  EXPECT_EQ(scenarios[0].name, "steady/spinlock");
  EXPECT_EQ(scenarios[1].name, "steady/compute");
  EXPECT_EQ(scenarios[1].vms[0].workload, "compute");
  EXPECT_EQ(scenarios[1].vms[1].workload, "message") << "a VM's own workload stays";
}

TEST(ScenarioFile, EveryProblemIsReportedWithItsKey) {
  const std::string error = parseError(
      "pcpus = 0\nrepetitions = 0\nmodes = [\"fast\"]\nsurprise = 1\n[[vm]]\nname = \"A\"\nvcpus = 6\nthreads_per_core "
      "= 4\n"
      "workload = \"sleep\"\nschedule = \"square:1\"\ncolour = \"red\"\n");
  for (const char* expected :
       {"pcpus: expected an integer 1..1024", "repetitions: expected an integer 1..100", "modes: \"fast\" is not a mode",
        "surprise: unknown key", "vm[0].threads_per_core: must divide vcpus", "vm[0].workload: \"sleep\"",
        "vm[0].schedule: schedule \"square:1\"", "vm[0].colour: unknown key", "the name \"A\" must be lower-case"})
    EXPECT_NE(error.find(expected), std::string::npos) << expected << "\n in: " << error;
  EXPECT_NE(parseError("[[vm]]\nname = \"a\"\n").find("vm[0].workload: missing"), std::string::npos);
  EXPECT_NE(parseError("pcpus = 2\n").find("vm: at least one"), std::string::npos);
  EXPECT_NE(parseError("[[vm]]\nname = \"a\"\nworkload = \"compute\"\n[[vm]]\nname = \"a\"\nworkload = \"compute\"\n")
                .find("appears twice"),
            std::string::npos);
  EXPECT_NE(parseError("pcpus = [").find("test.toml"), std::string::npos) << "TOML errors name the file";
}

TEST(ScenarioFile, PhasesAreWhereAnyVmsDemandChanges) {
  const auto scenarios = parseOk(
      "duration_s = 15\n[[vm]]\nname = \"a\"\nworkload = \"compute\"\nschedule = \"constant:4\"\n"
      "[[vm]]\nname = \"b\"\nworkload = \"compute\"\nschedule = \"square:0,4,10\"\n");
  const auto phases = scenarios.at(0).phases();
  ASSERT_EQ(phases.size(), 3u);
  EXPECT_DOUBLE_EQ(phases[0].from, 0);
  EXPECT_DOUBLE_EQ(phases[0].to, 5);
  EXPECT_EQ(phases[0].tasks, (std::vector<unsigned>{4, 0}));
  EXPECT_EQ(phases[1].tasks, (std::vector<unsigned>{4, 4}));
  EXPECT_DOUBLE_EQ(phases[2].from, 10);
  EXPECT_DOUBLE_EQ(phases[2].to, 15);
  EXPECT_TRUE(scenarios[0].phased());
  EXPECT_FALSE(parseOk("[[vm]]\nname = \"a\"\nworkload = \"compute\"\n").at(0).phased());
}

TEST(ScenarioFile, TheShippedScenariosParse) {
  unsigned files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(VCPUFOLD_SCENARIO_DIR)) {
    std::string error;
    EXPECT_TRUE(readScenarioFile(entry.path().string(), error)) << error;
    ++files;
  }
  EXPECT_GE(files, 8u);
  // The trade-off scenarios beside the standard set.
  unsigned tradeOffs = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(VCPUFOLD_SCENARIO_DIR).parent_path() / "trade-offs")) {
    std::string error;
    EXPECT_TRUE(readScenarioFile(entry.path().string(), error)) << error;
    ++tradeOffs;
  }
  EXPECT_GE(tradeOffs, 1u);
}
