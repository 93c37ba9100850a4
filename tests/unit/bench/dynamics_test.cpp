// SPDX-License-Identifier: GPL-2.0-or-later
#include "dynamics.h"

#include <gtest/gtest.h>

#include "modes.h"

using namespace vcpufold::bench;

namespace {

// vm-a busy throughout; vm-b idle 5 s, busy 5 s, idle 5 s: the shape of bench/contention/scenarios/load-step.toml.
Scenario loadStep() {
  Scenario scenario;
  scenario.durationSeconds = 15;
  scenario.vms.resize(2);
  scenario.vms[0].name = "a";
  scenario.vms[0].schedule = Schedule{Schedule::Kind::Constant, 4};
  scenario.vms[1].name = "b";
  scenario.vms[1].schedule = Schedule{Schedule::Kind::Square, 0, 4, 0, 10};
  return scenario;
}

// Targets per phase: a alone gets 2, both busy get 1 each (b idle: any).
const std::vector<std::vector<unsigned>> kTargets{{2, 1}, {1, 1}, {2, 1}};

}  // namespace

TEST(Dynamics, SettlingCountsFoldsAndUnfoldsApartInTicks) {
  // a: 4 at the start (warm-up 2 s), 2 from -1.5 s, 1 at 5.8 s, 2 at 13 s; b: 4, then 1 at 6.0 s.
  const std::vector<CountTimeline> preferred{{{-2, 4}, {-1.5, 2}, {5.8, 1}, {13, 2}}, {{-2, 4}, {6.0, 1}}};
  const auto dynamics = analyseDynamics(loadStep(), preferred, kTargets, 2, 1.0);
  ASSERT_EQ(dynamics.folds.size(), 2u) << "two phase changes; the start (a 4 -> 2) is start-up, not counted";
  EXPECT_EQ(dynamics.folds[0].kind, Settling::Kind::Reached) << "b wakes: a 2 -> 1, b 4 -> 1";
  EXPECT_NEAR(dynamics.folds[0].ticks, 1.0, 0.02);
  EXPECT_EQ(dynamics.unfolds[0].kind, Settling::Kind::Trivial);
  EXPECT_EQ(dynamics.unfolds[1].kind, Settling::Kind::Reached) << "b idles: a 1 -> 2, held to the end";
  EXPECT_NEAR(dynamics.unfolds[1].ticks, 3.0, 0.02);
  EXPECT_EQ(dynamics.folds[1].kind, Settling::Kind::Trivial);
  // Away from target: a 0.8 s by one in phase 2 (5..5.8), 3 s by one in phase 3 (10..13); b 1 s by 3 (5..6).
  EXPECT_NEAR(dynamics.misSizingVcpuSeconds, 0.8 + 3 + 3, 0.1);
  ASSERT_TRUE(dynamics.steadyChangesPerMinute);
  EXPECT_DOUBLE_EQ(*dynamics.steadyChangesPerMinute, 0) << "no change in the steady parts";
}

TEST(Dynamics, ATargetNeverHeldIsNotReached) {
  const std::vector<CountTimeline> preferred{{{-2, 4}, {-1, 2}}, {{-2, 4}}};
  const auto dynamics = analyseDynamics(loadStep(), preferred, kTargets, 2, 1.0);
  EXPECT_EQ(dynamics.folds[0].kind, Settling::Kind::NotReached);
}

TEST(Dynamics, ChangesInSteadyTimeAreCounted) {
  // a flaps 2 -> 1 -> 2 at 3 s and 3.5 s of the first phase, past its first steady second (phase 0: -2..5, hold 5).
  const std::vector<CountTimeline> preferred{{{-2, 4}, {-1.5, 2}, {3.2, 1}, {3.6, 2}, {5.8, 1}, {13, 2}},
                                             {{-2, 4}, {6.0, 1}}};
  const auto dynamics = analyseDynamics(loadStep(), preferred, kTargets, 2, 1.0);
  ASSERT_TRUE(dynamics.steadyChangesPerMinute);
  EXPECT_GT(*dynamics.steadyChangesPerMinute, 0);
}

TEST(Modes, MaxMinSharesFillByWeightUpToDemand) {
  const auto shares = maxMinShares(2, {4, 4, 4}, {300, 100, 100});
  EXPECT_NEAR(shares[0], 1.2, 1e-9);
  EXPECT_NEAR(shares[1], 0.4, 1e-9);
  const auto capped = maxMinShares(4, {0.5, 4, 4}, {100, 100, 100});
  EXPECT_NEAR(capped[0], 0.5, 1e-9) << "a small demand is met";
  EXPECT_NEAR(capped[1], 1.75, 1e-9) << "the rest is split";
  const auto idle = maxMinShares(2, {0, 4}, {100, 100});
  EXPECT_NEAR(idle[1], 2, 1e-9);
}

TEST(Modes, StaticFairIsTheWeightedShareRoundedUp) {
  EXPECT_EQ(staticFairSizes(2, {300, 100, 100}, {4, 4, 4}), (std::vector<unsigned>{2, 1, 1}));
  EXPECT_EQ(staticFairSizes(8, {100, 100}, {2, 16}), (std::vector<unsigned>{2, 4}));
  EXPECT_EQ(staticFairSizes(2, std::vector<double>(12, 100), std::vector<unsigned>(12, 2)),
            std::vector<unsigned>(12, 1));
}
