// SPDX-License-Identifier: GPL-2.0-or-later
// The fold-cost probe's order, CSV and report (bench/guests/fold_cost.h).

#include "fold_cost.h"

#include <gtest/gtest.h>

using namespace vcpufold::bench;

TEST(FoldCost, TheTwoWaysAlternateWhichGoesFirst) {
  EXPECT_TRUE(spreadRunsFirst(1));
  EXPECT_FALSE(spreadRunsFirst(2));
  EXPECT_TRUE(spreadRunsFirst(3));
  EXPECT_FALSE(spreadRunsFirst(4));
}

TEST(FoldCost, TheCsvReadsBackAsWritten) {
  const std::vector<FoldCostPair> pairs{{"6.12.118+deb12-cloud-amd64", 1, 4.5, 4.75},
                                        {"6.1.0-57-cloud-amd64", 2, 5.125, 6.0}};
  const auto back = readFoldCostCsv(foldCostCsv(pairs));
  ASSERT_EQ(back.size(), 2U);
  EXPECT_EQ(back[0].kernel, "6.12.118+deb12-cloud-amd64");
  EXPECT_EQ(back[1].repetition, 2U);
  EXPECT_DOUBLE_EQ(back[1].spreadSeconds, 5.125);
  EXPECT_DOUBLE_EQ(back[0].foldedSeconds, 4.75);
}

TEST(FoldCost, AMalformedRowIsAnErrorNotAZero) {
  EXPECT_THROW(readFoldCostCsv("kernel,repetition,spread_s,folded_s\nk,1,4.5\n"), std::runtime_error);
  EXPECT_THROW(readFoldCostCsv("kernel,repetition,spread_s,folded_s\nk,1,four,4.5\n"), std::runtime_error);
}

TEST(FoldCost, TheReportGivesFoldedOverSpreadWorkPerKernelFromThePairs) {
  FoldCostReportInput input;
  input.vcpus = 4;
  input.unitSize = 60000;
  // Folded units 25% longer on one kernel (work per pCPU second 0.80),
  // equal on the other (1.00).
  for (unsigned repetition = 1; repetition <= 6; ++repetition) {
    const double spread = 4 + 0.1 * repetition;
    input.pairs.push_back({"slow", repetition, spread, spread * 1.25});
    input.pairs.push_back({"even", repetition, spread, spread});
  }
  const std::string report = renderFoldCost(input);
  EXPECT_NE(report.find("| slow | 6 | 0.80 [0.80, 0.80] |"), std::string::npos) << report;
  EXPECT_NE(report.find("| even | 6 | 1.00 [1.00, 1.00] |"), std::string::npos) << report;
  EXPECT_NE(report.find("| 6 of 6 |"), std::string::npos) << report;  // slow: every folded unit the slower
  EXPECT_NE(report.find("| 0 of 6 |"), std::string::npos) << report;
}
