// SPDX-License-Identifier: GPL-2.0-or-later
#include "statistics.h"

#include <gtest/gtest.h>

using namespace vcpufold::bench;

TEST(Statistics, MedianOfOddAndEvenSamples) {
  EXPECT_DOUBLE_EQ(median({5, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0);
}

TEST(Statistics, TheIntervalHoldsTheMedianWithinTheSample) {
  const auto estimate = estimateMedian({10, 12, 11, 13, 30});
  EXPECT_DOUBLE_EQ(estimate.median, 12);
  EXPECT_LE(estimate.low, 12);
  EXPECT_GE(estimate.high, 12);
  EXPECT_GE(estimate.low, 10);
  EXPECT_LE(estimate.high, 30);
  EXPECT_LT(estimate.low, estimate.high);
  EXPECT_EQ(estimate.samples, 5u);
}

TEST(Statistics, RatioIntervalsSeparateOnlyWhatDiffers) {
  const std::vector<double> base{100, 102, 98, 101, 99};
  const auto clear = estimateRatio({150, 152, 149, 151, 148}, base);
  EXPECT_NEAR(clear.median, 1.5, 0.01);
  EXPECT_EQ(judgeAtLeast(clear, 1.3), Verdict::Met);
  EXPECT_EQ(judgeAtLeast(clear, 1.6), Verdict::Missed);
  const auto noisy = estimateRatio({80, 140, 100, 125, 95}, base);
  EXPECT_EQ(judgeAtLeast(noisy, 1.0), Verdict::NotShown) << noisy.low << ".." << noisy.high;
}

TEST(Statistics, OneSampleShowsNothing) {
  const auto single = estimateRatio({200}, {100});
  EXPECT_DOUBLE_EQ(single.median, 2);
  EXPECT_EQ(judgeAtLeast(single, 1.3), Verdict::NotShown);
  EXPECT_EQ(judgeAtMost(estimateMedian({0.01}), 0.1), Verdict::NotShown);
  EXPECT_EQ(judgeAtMost(estimateMedian({0.01, 0.02, 0.03}), 0.1), Verdict::Met);
  EXPECT_EQ(judgeAtMost(estimateMedian({0.3, 0.4, 0.5}), 0.1), Verdict::Missed);
}
