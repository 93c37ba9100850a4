// SPDX-License-Identifier: GPL-2.0-or-later
// The agent's early demand reports (demand_watch.h).

#include "vcpufold/agent/demand_watch.h"
#include "test_time.h"

#include <gtest/gtest.h>

using vcpufold::agent::DemandWatch;

TEST(DemandWatch, NothingEarlyBeforeTheFirstPeriodicStatus) {
  DemandWatch watch;
  EXPECT_FALSE(watch.onSample(4, at(0)));
  EXPECT_FALSE(watch.onSample(4, at(50)));
  EXPECT_DOUBLE_EQ(*watch.takePeriodic(), 4);
}

TEST(DemandWatch, AChangeHeldForTwoSamplesIsReportedAtOnce) {
  DemandWatch watch;
  watch.onSample(0, at(0));
  watch.takePeriodic();
  EXPECT_FALSE(watch.onSample(4, at(50))) << "one sample is not a change yet";
  const auto early = watch.onSample(4, at(100));
  ASSERT_TRUE(early);
  EXPECT_DOUBLE_EQ(*early, 4);
  EXPECT_FALSE(watch.onSample(4, at(150))) << "the new level is not news";
  EXPECT_DOUBLE_EQ(*watch.takePeriodic(), 4) << "the periodic status says the new level, not an average across it";
}

TEST(DemandWatch, OneOddSampleOrASmallMoveIsNotAChange) {
  DemandWatch watch;
  watch.onSample(4, at(0));
  watch.takePeriodic();
  EXPECT_FALSE(watch.onSample(8, at(50)));
  EXPECT_FALSE(watch.onSample(4, at(100)));
  EXPECT_FALSE(watch.onSample(8, at(150))) << "the streak restarted";
  EXPECT_FALSE(watch.onSample(4.5, at(200))) << "half a task";
  EXPECT_FALSE(watch.onSample(4.5, at(250)));
  EXPECT_FALSE(watch.onSample(6, at(300))) << "up once";
  EXPECT_FALSE(watch.onSample(2, at(350))) << "then down: not the same way";
}

TEST(DemandWatch, FallsAreReportedToo) {
  DemandWatch watch;
  watch.onSample(16, at(0));
  watch.takePeriodic();
  watch.onSample(2, at(50));
  const auto early = watch.onSample(2, at(100));
  ASSERT_TRUE(early);
  EXPECT_DOUBLE_EQ(*early, 2);
}

TEST(DemandWatch, EarlyReportsAreCappedAtTenASecond) {
  DemandWatch watch;
  watch.onSample(0, at(0));
  watch.takePeriodic();
  unsigned reports = 0;
  // The load swings between 0 and 8 every two samples of 10 ms for one second.
  for (std::int64_t ms = 10; ms <= 1000; ms += 10) {
    const bool high = (ms / 20) % 2 == 1;
    if (watch.onSample(high ? 8 : 0, at(ms))) ++reports;
  }
  EXPECT_GT(reports, 0u);
  EXPECT_LE(reports, 10u);
}
