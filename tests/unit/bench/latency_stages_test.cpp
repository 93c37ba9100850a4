// SPDX-License-Identifier: GPL-2.0-or-later
#include "latency_stages.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace vcpufold::bench;

namespace {

std::string writeLog(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/latency_stages_" + name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST(LatencyStages, ReadsTheTimesHostdAndTheAgentLog) {
  const auto hostd = writeLog("hostd.log",
                              "[2026-12-01 10:00:00.000] [debug] decision 7 at 1030.250 ms: status of vm-b; snapshot 3 "
                              "(400.000 ms old), decide and queue 1.500 ms (1.200 ms CPU)\n"
                              "[2026-12-01 10:00:00.100] [info] vm-a: hint 4 -> 1: contention\n"
                              "[2026-12-01 10:00:01.000] [debug] decision 8 at 2000.000 ms: snapshot 4 (0.100 ms old), "
                              "decide and queue 2.000 ms\n");
  EXPECT_EQ(readDecisionTimes(hostd), (std::vector<double>{1030.25, 2000.0}));
  EXPECT_EQ(readTickDecisionTimes(hostd), (std::vector<double>{2000.0})) << "decision 7 names its reason: not a tick";
  const auto agent = writeLog("agent.log",
                              "[debug] demand 4.0 tasks at 1010.500 ms: status sent now\n"
                              "[debug] hint seq 9 (1 vCPUs) received at 1032.000 ms, applied in 0.750 ms\n");
  EXPECT_EQ(readEarlyStatusTimes(agent), (std::vector<double>{1010.5}));
  const auto hints = readAgentHints(agent);
  ASSERT_EQ(hints.size(), 1u);
  EXPECT_EQ(hints[0].vcpus, 1u);
  EXPECT_DOUBLE_EQ(hints[0].receivedMs, 1032.0);
  EXPECT_DOUBLE_EQ(hints[0].applyMs, 0.75);
  EXPECT_TRUE(readAgentHints(::testing::TempDir() + "/no-such-log").empty());
}

TEST(LatencyStages, EachChangeIsTimedToTheFirstHintThatMovesTheMeasuredVmItsWay) {
  // A fold at 1000 ms reported at 1100, decided at 1130, received at 1132;
  // the lease renewal of the old hint (4 at 1050) is not the fold. An unfold
  // at 3000 ms decided at 4130 (the delay), received at 4131.
  const std::vector<DemandChange> changes{{1000, true}, {3000, false}};
  const std::vector<double> decisions{900, 1130, 2000, 3040, 4130};
  const std::vector<AgentHint> hints{{1050, 0.5, 4}, {1132, 1.0, 1}, {2001, 0.5, 1}, {4131, 0.5, 2}};
  const std::vector<double> reports{1100, 3040};
  const auto split = splitIntoStages(changes, decisions, hints, reports, 1);
  ASSERT_EQ(split.fold.total.size(), 1u);
  EXPECT_DOUBLE_EQ(split.fold.report[0], 100);
  EXPECT_DOUBLE_EQ(split.fold.decide[0], 30);
  EXPECT_DOUBLE_EQ(split.fold.send[0], 2);
  EXPECT_DOUBLE_EQ(split.fold.apply[0], 1.0);
  EXPECT_DOUBLE_EQ(split.fold.total[0], 133);
  ASSERT_EQ(split.unfold.total.size(), 1u);
  EXPECT_DOUBLE_EQ(split.unfold.report[0], 40);
  EXPECT_DOUBLE_EQ(split.unfold.decide[0], 1090);
  EXPECT_DOUBLE_EQ(split.unfold.total[0], 1131.5);
}

TEST(LatencyStages, AChangeDecidedOnATickHasNoReportStageAndAChangeNeverFollowedIsNotTimed) {
  // The report came after the decision (the tick decided first): send and
  // total only. The second fold is never followed by a hint of 1.
  const std::vector<DemandChange> changes{{1000, true}, {5000, true}};
  const auto split = splitIntoStages(changes, {1500}, {{1501, 0.5, 1}}, {1600}, 1);
  ASSERT_EQ(split.fold.total.size(), 1u);
  EXPECT_TRUE(split.fold.report.empty());
  EXPECT_DOUBLE_EQ(split.fold.send[0], 1);
  EXPECT_DOUBLE_EQ(split.fold.total[0], 501.5);
  EXPECT_TRUE(split.unfold.total.empty());
}

TEST(LatencyStages, QuantilesAreNearestRankAndTheTableSaysHowManyWereTimed) {
  EXPECT_DOUBLE_EQ(quantile({5, 1, 3, 2, 4}, 0.5), 3);
  EXPECT_DOUBLE_EQ(quantile({5, 1, 3, 2, 4}, 0.95), 5);
  EXPECT_DOUBLE_EQ(quantile({}, 0.5), 0);
  Stages stages;
  stages.total = {100, 200};
  const auto text = describeStages("fold", stages, 10);
  EXPECT_NE(text.find("fold      2 of 10 changes timed"), std::string::npos) << text;
  EXPECT_NE(text.find("total"), std::string::npos);
}

TEST(LatencyStages, TheQuickestLeaseRenewalPinsAGuestClockWithinTheControlPortsBound) {
  // The guest's clock runs 5000 ms ahead; renewals arrive 3, 1.5 and 4 ms
  // after their ticks. The control port said 5008 +/- 12.
  const std::vector<double> ticks{1000, 2000, 3000};
  const std::vector<AgentHint> hints{{6003, 0.5, 4}, {7001.5, 0.5, 4}, {8004, 0.5, 4}};
  const auto offset = offsetFromRenewals(ticks, ticks, hints, 5008, 12);
  ASSERT_TRUE(offset);
  EXPECT_DOUBLE_EQ(*offset, 5001.5);
}

TEST(LatencyStages, ATickRightAfterAnotherDecisionIsNotARenewalToTrust) {
  // An event decision 20 ms before the tick at 2000 sent a hint that arrived
  // at 1990 host time: it must not pass for that tick's renewal.
  const std::vector<double> ticks{1000, 2000};
  const std::vector<double> decisions{1000, 1980, 2000};
  const std::vector<AgentHint> hints{{6004, 0.5, 4}, {6990, 0.5, 1}, {7004, 0.5, 1}};
  const auto offset = offsetFromRenewals(ticks, decisions, hints, 5000, 12);
  ASSERT_TRUE(offset);
  EXPECT_DOUBLE_EQ(*offset, 5004);
}

TEST(LatencyStages, NoRenewalOrOneFarFromTheControlPortGivesNoRefinedOffset) {
  EXPECT_FALSE(offsetFromRenewals({1000}, {1000}, {}, 5000, 12));
  // The only hint lands 250 ms after the tick by the control port's offset: no renewal of that tick.
  EXPECT_FALSE(offsetFromRenewals({1000}, {1000}, {{6250, 0.5, 4}}, 5000, 12));
}
