// SPDX-License-Identifier: GPL-2.0-or-later
// The demand schedules the contention bench puts on its emulated VMs.

#include "schedule.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace vcpufold::bench;

namespace {

Schedule parsed(const std::string& text) {
  std::string error;
  auto schedule = parseSchedule(text, error);
  EXPECT_TRUE(schedule) << error;
  return schedule.value_or(Schedule{});
}

}  // namespace

TEST(Schedule, ConstantAndStep) {
  EXPECT_EQ(tasksAt(parsed("constant:4"), 0), 4u);
  EXPECT_EQ(tasksAt(parsed("constant:4"), 1e6), 4u);
  const Schedule step = parsed("step:0,4,8");
  EXPECT_EQ(tasksAt(step, 7.99), 0u);
  EXPECT_EQ(tasksAt(step, 8.0), 4u);
  EXPECT_EQ(changeTimes(step, 20), (std::vector<double>{8.0}));
  EXPECT_TRUE(changeTimes(step, 5).empty());
}

TEST(Schedule, SquareWaveAlternatesEveryHalfPeriod) {
  const Schedule square = parsed("square:16,2,20");
  EXPECT_EQ(tasksAt(square, 0), 16u);
  EXPECT_EQ(tasksAt(square, 9.99), 16u);
  EXPECT_EQ(tasksAt(square, 10), 2u);
  EXPECT_EQ(tasksAt(square, 20), 16u);
  EXPECT_EQ(changeTimes(square, 60), (std::vector<double>{10, 20, 30, 40, 50}));
}

TEST(Schedule, TheRandomWalkRepeatsForASeedAndStaysInItsBounds) {
  const Schedule walk = parsed("walk:4,1,8,1,42");
  const Schedule again = parsed("walk:4,1,8,1,42");
  const Schedule other = parsed("walk:4,1,8,1,43");
  bool differs = false;
  for (int t = 0; t < 200; ++t) {
    const unsigned tasks = tasksAt(walk, t);
    EXPECT_GE(tasks, 1u);
    EXPECT_LE(tasks, 8u);
    EXPECT_EQ(tasks, tasksAt(again, t));
    if (t > 0) {
      EXPECT_EQ(std::abs(static_cast<int>(tasks) - static_cast<int>(tasksAt(walk, t - 1))), 1) << "one step a second";
    }
    differs = differs || tasks != tasksAt(other, t);
  }
  EXPECT_TRUE(differs) << "another seed, another walk";
}

TEST(Schedule, AFollowerLooksAgainAtEachStepAndSeesTheNewCount) {
  EXPECT_FALSE(nextStepAfter(parsed("constant:4"), 0)) << "a constant never changes";
  const Schedule step = parsed("step:0,4,8");
  ASSERT_TRUE(nextStepAfter(step, 0));
  EXPECT_DOUBLE_EQ(*nextStepAfter(step, 3), 8.0);
  EXPECT_FALSE(nextStepAfter(step, 8.5)) << "after the step, nothing more";
  // Every half period of a square wave and every move of a walk, including
  // steps whose times do not divide exactly in floating point: woken at the
  // step, a follower must already see the new count.
  for (const char* text : {"square:16,2,20", "square:3,1,0.7", "walk:4,1,8,0.1,42", "walk:4,1,8,0.3,7"}) {
    const Schedule schedule = parsed(text);
    const auto changes = changeTimes(schedule, 30);
    ASSERT_FALSE(changes.empty()) << text;
    double at = 0;
    std::size_t seen = 0;
    for (int guard = 0; guard < 1000 && at < 30; ++guard) {
      const auto next = nextStepAfter(schedule, at);
      ASSERT_TRUE(next) << text;
      EXPECT_GT(*next, at) << text;
      if (seen < changes.size() && *next >= changes[seen]) {
        EXPECT_NEAR(*next, changes[seen], 1e-5) << text << ": no change is stepped over";
        EXPECT_NE(tasksAt(schedule, *next), tasksAt(schedule, at)) << text << " at " << *next;
        ++seen;
      }
      at = *next;
    }
    EXPECT_EQ(seen, changes.size()) << text;
  }
}

TEST(Schedule, BadTextIsRefusedWithTheReason) {
  std::string error;
  for (const char* bad : {"", "constant", "constant:-1", "constant:300", "constant:1.5", "step:1,2", "square:4,1,0",
                          "walk:9,1,8,1,1", "walk:4,1,8,0.01,1", "sine:1,2,3"}) {
    EXPECT_FALSE(parseSchedule(bad, error)) << bad;
    EXPECT_NE(error.find("schedule"), std::string::npos) << error;
  }
}
