// SPDX-License-Identifier: GPL-2.0-or-later
#include "statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <random>

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

TEST(Statistics, PairingCancelsDriftBetweenRepetitions) {
  // The machine's speed halves over the run; every repetition's a is 1.2 of
  // its b. Unpaired, the drift swamps the effect; paired, it cancels.
  const std::vector<double> b{100, 85, 70, 60, 50};
  const std::vector<double> a{120, 102, 84, 72, 60};
  const auto unpaired = estimateRatio(a, b);
  EXPECT_EQ(judgeAtLeast(unpaired, 1.1), Verdict::NotShown) << unpaired.low << ".." << unpaired.high;
  const auto paired = estimatePairedRatio(a, b);
  EXPECT_NEAR(paired.median, 1.2, 1e-9);
  EXPECT_NEAR(paired.low, 1.2, 1e-9);
  EXPECT_NEAR(paired.high, 1.2, 1e-9);
  EXPECT_EQ(paired.samples, 5u);
  EXPECT_EQ(judgeAtLeast(paired, 1.1), Verdict::Met);
}

TEST(Statistics, PairedRatiosSpreadAsTheRepetitionsDo) {
  const auto paired = estimatePairedRatio({110, 90, 130, 100, 95}, {100, 100, 100, 100, 100});
  EXPECT_DOUBLE_EQ(paired.median, 1.0);
  EXPECT_GE(paired.low, 0.9);
  EXPECT_LE(paired.high, 1.3);
  EXPECT_LT(paired.low, paired.high);
  EXPECT_EQ(judgeAtLeast(paired, 1.0), Verdict::NotShown);
  // A repetition that measured nothing on one side is left out, not counted as 0.
  const auto dropped = estimatePairedRatio({120, 0, 120}, {100, 100, 100});
  EXPECT_EQ(dropped.samples, 2u);
  EXPECT_DOUBLE_EQ(dropped.median, 1.2);
}

TEST(Statistics, PairsAreMatchedByRepetitionNotByPosition) {
  // b lost its second repetition. Matched by position, every later a would be
  // set against the b of the repetition after its own (ratios 1.5, 1.33, ...);
  // matched by number, each is 1.1 of its own repetition's b.
  const std::map<unsigned, double> a{{1, 110}, {2, 165}, {3, 220}, {4, 275}};
  const std::map<unsigned, double> b{{1, 100}, {3, 200}, {4, 250}, {5, 300}};
  const auto paired = estimatePairedRatio(a, b);
  EXPECT_EQ(paired.samples, 3u);
  EXPECT_NEAR(paired.median, 1.1, 1e-9);
  EXPECT_NEAR(paired.low, 1.1, 1e-9);
  EXPECT_NEAR(paired.high, 1.1, 1e-9);
  EXPECT_EQ(estimatePairedRatio(a, std::map<unsigned, double>{}).samples, 0u);
}

TEST(Statistics, TheIntervalCoversTheTrueMedianAboutAsOftenAsItSays) {
  // The benches read verdicts from 5 to 15 repetitions, where a percentile
  // bootstrap of a median is known to cover a little less than its nominal
  // 95%. Measure how much on samples of known median (log-normal around 1,
  // spread like the guests bench's per-repetition ratios): a broken interval
  // (too narrow, or one that always spans every sample) shows here.
  std::mt19937 random(7);
  std::normal_distribution<double> logRatio(0, 0.15);
  constexpr unsigned kTrials = 1000;
  for (const unsigned repetitions : {5u, 6u, 8u, 12u}) {
    unsigned covered = 0;
    for (unsigned trial = 0; trial < kTrials; ++trial) {
      std::vector<double> ratios;
      for (unsigned index = 0; index < repetitions; ++index) ratios.push_back(std::exp(logRatio(random)));
      const auto estimate = estimateMedian(ratios, 1000);
      if (estimate.low <= 1 && 1 <= estimate.high) ++covered;
    }
    const double coverage = static_cast<double>(covered) / kTrials;
    std::printf("%u repetitions: the interval held the true median in %.1f%% of %u samples\n", repetitions,
                coverage * 100, kTrials);
    EXPECT_GE(coverage, 0.88) << repetitions << " repetitions";
    EXPECT_LE(coverage, 0.99) << repetitions << " repetitions";
  }
}
