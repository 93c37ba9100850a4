// SPDX-License-Identifier: GPL-2.0-or-later
#include "random_summary.h"

#include <gtest/gtest.h>

using namespace vcpufold::bench;

namespace {

Estimate interval(double median, double low, double high, unsigned samples = 5) { return {median, low, high, samples}; }

}  // namespace

TEST(RandomSummary, SpreadIsMinQuartilesAndMax) {
  const Spread spread = spreadOf({1.3, 0.9, 1.1, 1.0, 1.2});
  EXPECT_EQ(spread.scenarios, 5u);
  EXPECT_DOUBLE_EQ(spread.min, 0.9);
  EXPECT_DOUBLE_EQ(spread.lowerQuartile, 1.0);
  EXPECT_DOUBLE_EQ(spread.median, 1.1);
  EXPECT_DOUBLE_EQ(spread.upperQuartile, 1.2);
  EXPECT_DOUBLE_EQ(spread.max, 1.3);
  EXPECT_LE(spread.medianEstimate.low, 1.1);
  EXPECT_GE(spread.medianEstimate.high, 1.1);
  // Between order statistics: quartiles of 4 values interpolate.
  const Spread four = spreadOf({1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(four.lowerQuartile, 1.75);
  EXPECT_DOUBLE_EQ(four.median, 2.5);
  EXPECT_DOUBLE_EQ(four.upperQuartile, 3.25);
}

TEST(RandomSummary, ALossIsAnIntervalWhollyBelowItsBar) {
  std::vector<RandomScenarioRatios> ratios(4);
  ratios[0] = {"a",
               "",
               interval(1.2, 1.1, 1.3),
               interval(0.93, 0.90, 0.96),
               interval(1.0, 0.98, 1.02),
               interval(0.96, 0.95, 0.969)};
  ratios[1] = {
      "b", "", std::nullopt, interval(0.98, 0.95, 1.01), interval(0.97, 0.96, 0.99), interval(0.97, 0.96, 0.98)};
  ratios[2] = {"c",          "",          std::nullopt, interval(0.5, 0.5, 0.5, 1),
               std::nullopt, std::nullopt};  // one sample shows nothing
  ratios[3] = {"d", "", interval(0.99, 0.97, 0.999), std::nullopt, std::nullopt, std::nullopt};
  const auto losses = lossesOf(ratios);
  ASSERT_EQ(losses.size(), 4u);
  EXPECT_EQ(losses[0].scenario, "a");
  EXPECT_EQ(losses[0].against, "steal-law");
  EXPECT_EQ(losses[1].against, "best-static");
  EXPECT_DOUBLE_EQ(losses[1].bar, 0.97);
  EXPECT_EQ(losses[2].scenario, "b");
  EXPECT_EQ(losses[2].against, "static-fair");
  EXPECT_EQ(losses[3].scenario, "d");
  EXPECT_EQ(losses[3].against, "unfolded");

  const std::string text = randomSummaryMarkdown({42, "random-losses"}, ratios);
  EXPECT_NE(text.find("seed 42, 4 drawn"), std::string::npos);
  EXPECT_NE(text.find("**Losses**"), std::string::npos);
  EXPECT_NE(text.find("`a`: vcpufold / steal-law 0.93 [0.90, 0.96] (bar 1.00); reproduce with `--scenario "
                      "random-losses/a.toml`"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("`b`: vcpufold / static-fair"), std::string::npos);
  EXPECT_EQ(text.find("`c`: vcpufold"), std::string::npos);
  // steal-law spread over a, b, c: 0.93, 0.98, 0.5.
  EXPECT_NE(text.find("| steal-law | 3 | 0.50 | 0.72 | 0.93"), std::string::npos) << text;
}

TEST(RandomSummary, ARunWithoutLossesSaysSo) {
  const std::vector<RandomScenarioRatios> ratios{{"a", "2 VMs", interval(1.2, 1.1, 1.3), interval(1.1, 1.05, 1.2),
                                                  interval(1.0, 0.98, 1.02), interval(0.99, 0.97, 1.01)}};
  EXPECT_TRUE(lossesOf(ratios).empty());
  EXPECT_NE(randomSummaryMarkdown({1, "random-losses"}, ratios).find("none in this run"), std::string::npos);
}
