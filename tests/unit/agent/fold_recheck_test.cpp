// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/fold_recheck.h"

#include <gtest/gtest.h>

#include "test_time.h"

using vcpufold::agent::FoldRecheck;
using vcpufold::protocol::Control;
using vcpufold::protocol::CpuSet;

namespace {
constexpr std::chrono::milliseconds kQuietFor{10'000};
const CpuSet kOne{0};
const CpuSet kTwo{0, 1};
}  // namespace

TEST(FoldRecheck, TheFirstAskGoesToTheActuator) {
  const FoldRecheck recheck;
  EXPECT_TRUE(recheck.due(kOne, Control::Host, at(0), kQuietFor));
}

TEST(FoldRecheck, AfterAQuietPassTheSameFoldWaitsUntilQuietForHasPassed) {
  FoldRecheck recheck;
  recheck.applied(kOne, Control::Host, at(1000), true);
  EXPECT_FALSE(recheck.due(kOne, Control::Host, at(1000), kQuietFor));
  EXPECT_FALSE(recheck.due(kOne, Control::Host, at(10'999), kQuietFor));
  EXPECT_TRUE(recheck.due(kOne, Control::Host, at(11'000), kQuietFor));
}

TEST(FoldRecheck, AnotherFoldOrAnotherControlIsAppliedAtOnce) {
  FoldRecheck recheck;
  recheck.applied(kOne, Control::Host, at(0), true);
  EXPECT_TRUE(recheck.due(kTwo, Control::Host, at(1), kQuietFor));
  EXPECT_TRUE(recheck.due(kOne, Control::Fallback, at(1), kQuietFor));
}

TEST(FoldRecheck, APassThatWroteIsFollowedByAnotherAtTheNextAsk) {
  FoldRecheck recheck;
  recheck.applied(kOne, Control::Host, at(0), true);
  recheck.applied(kOne, Control::Host, at(5000), false);
  EXPECT_TRUE(recheck.due(kOne, Control::Host, at(5001), kQuietFor));
}

TEST(FoldRecheck, ForgettingSendsTheNextAskToTheActuator) {
  FoldRecheck recheck;
  recheck.applied(kOne, Control::Host, at(0), true);
  recheck.forget();
  EXPECT_TRUE(recheck.due(kOne, Control::Host, at(1), kQuietFor));
}
