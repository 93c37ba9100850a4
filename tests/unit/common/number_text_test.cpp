// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/common/number_text.h"

#include <gtest/gtest.h>

#include <limits>

using vcpufold::fixedDecimals;
using vcpufold::metricNumber;

TEST(NumberText, FixedDecimalsRoundsAsPrintfDoes) {
  EXPECT_EQ(fixedDecimals(3.14159, 2), "3.14");
  EXPECT_EQ(fixedDecimals(2.5, 0), "2");  // to nearest, ties to even, as "%.0f"
  EXPECT_EQ(fixedDecimals(0.125, 2), "0.12");
  EXPECT_EQ(fixedDecimals(-1.0 / 3, 3), "-0.333");
  EXPECT_EQ(fixedDecimals(1e300, 2).size(), 304u) << "the longest values still fit";
}

TEST(NumberText, MetricNumbersAreShortAndSpellNonFiniteAsPrometheusDoes) {
  EXPECT_EQ(metricNumber(0.25), "0.25");
  EXPECT_EQ(metricNumber(1234), "1234");
  // Whole numbers exactly: counters and Unix timestamps past nine digits.
  EXPECT_EQ(metricNumber(1800000123), "1800000123");
  EXPECT_EQ(metricNumber(-0.0), "0");
  EXPECT_EQ(metricNumber(1e300), "1e+300");
  EXPECT_EQ(metricNumber(0.000001), "1e-06");
  EXPECT_EQ(metricNumber(1.0 / 3), "0.333333333");
  EXPECT_EQ(metricNumber(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(metricNumber(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(metricNumber(-std::numeric_limits<double>::infinity()), "-Inf");
}
