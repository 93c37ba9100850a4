// SPDX-License-Identifier: GPL-2.0-or-later
// Pooling the paired repetitions of several guests-bench runs (bench/guests/pooled_runs.h).

#include "pooled_runs.h"

#include <gtest/gtest.h>

using namespace vcpufold::bench;

namespace {

const std::string kHeader = "actuator,workload,mode,repetition,guest,unit_s,units_per_s_all_guests,overdue_acks\n";

// One repetition of every mode, a row per guest (two guests).
std::string repetition(unsigned number, double unfolded, double vcpufold, double fixed) {
  std::string rows;
  for (const auto& [mode, rate] :
       {std::pair<const char*, double>{"unfolded", unfolded}, {"vcpufold", vcpufold}, {"fixed", fixed}})
    for (int guest = 1; guest <= 2; ++guest)
      rows += std::string("cpuset-6.12,compute,") + mode + "," + std::to_string(number) + "," + std::to_string(guest) +
              ",4.0," + std::to_string(rate) + ",0\n";
  return rows;
}

}  // namespace

TEST(PooledRuns, RepetitionsOfSeveralRunsPoolAsPairs) {
  // Run 1: vcpufold at 0.8 of unfolded in both repetitions; run 2 (another
  // machine speed): 0.9 in three. Pooled: five pairs, the median 0.9 ... the
  // third smallest of 0.8, 0.8, 0.9, 0.9, 0.9.
  const std::string first = kHeader + repetition(1, 1.0, 0.8, 0.5) + repetition(2, 2.0, 1.6, 1.0);
  const std::string second =
      kHeader + repetition(1, 0.5, 0.45, 0.5) + repetition(2, 0.6, 0.54, 0.6) + repetition(3, 0.4, 0.36, 0.4);
  const auto rows = poolGuestRuns({first, second});
  ASSERT_EQ(rows.size(), 1U);
  EXPECT_EQ(rows[0].actuator, "cpuset-6.12");
  EXPECT_EQ(rows[0].runs, 2U);
  EXPECT_EQ(rows[0].vcpufoldOverUnfolded.samples, 5U);
  EXPECT_NEAR(rows[0].vcpufoldOverUnfolded.median, 0.9, 1e-9);
  EXPECT_NEAR(rows[0].vcpufoldOverUnfolded.low, 0.8, 1e-9);
  EXPECT_NEAR(rows[0].vcpufoldOverUnfolded.high, 0.9, 1e-9);
  EXPECT_EQ(rows[0].vcpufoldBelowUnfolded, 5U);
  EXPECT_NEAR(rows[0].fixedOverUnfolded.median, 1.0, 1e-9);
  // vcpufold / fixed per repetition: 1.6, 1.6 (run 1), 0.9, 0.9, 0.9 (run 2).
  EXPECT_EQ(rows[0].vcpufoldOverFixed.samples, 5U);
  EXPECT_NEAR(rows[0].vcpufoldOverFixed.median, 0.9, 1e-9);
  EXPECT_NEAR(rows[0].vcpufoldOverFixed.high, 1.6, 1e-9);
  const std::string table = renderPooled(rows, {"a.csv", "b.csv"});
  EXPECT_NE(table.find("| `cpuset-6.12` | compute | 2 | 5 | 0.90 [0.80, 0.90] | 5 | 1.00 [0.50, 1.00] | 0.90 [0.90, "
                       "1.60] |"),
            std::string::npos)
      << table;
}

TEST(PooledRuns, ARepetitionMissingAModeIsNotPaired) {
  // Repetition 2 ran only unfolded: it pairs with nothing. Repetition 3 ran
  // vcpufold and fixed but no unfolded: it pairs vcpufold with fixed, and
  // only that.
  const std::string run = kHeader + repetition(1, 1.0, 0.8, 0.5) +
                          "cpuset-6.12,compute,unfolded,2,1,4.0,1.0,0\ncpuset-6.12,compute,unfolded,2,2,4.0,1.0,0\n"
                          "cpuset-6.12,compute,vcpufold,3,1,4.0,0.6,0\ncpuset-6.12,compute,fixed,3,1,4.0,0.4,0\n";
  const auto rows = poolGuestRuns({run});
  ASSERT_EQ(rows.size(), 1U);
  EXPECT_EQ(rows[0].vcpufoldOverUnfolded.samples, 1U);
  EXPECT_EQ(rows[0].fixedOverUnfolded.samples, 1U);
  EXPECT_EQ(rows[0].vcpufoldOverFixed.samples, 2U);
  EXPECT_NEAR(rows[0].vcpufoldOverFixed.median, 1.55, 1e-9);  // of 1.6 and 1.5
}

TEST(PooledRuns, AFileWithoutTheColumnsOrWithABadRowIsAnError) {
  EXPECT_THROW(poolGuestRuns({"actuator,workload,mode\nx,y,z\n"}), std::runtime_error);
  EXPECT_THROW(poolGuestRuns({kHeader + "cpuset,compute,unfolded,one,1,4.0,1.0,0\n"}), std::runtime_error);
  EXPECT_THROW(poolGuestRuns({kHeader + "cpuset,compute,unfolded\n"}), std::runtime_error);
}
