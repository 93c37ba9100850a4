// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/common/process_stat.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "fixture_tree.h"

using vcpufold::parseProcessStat;

namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(vcpufold::testing::fixturesDirectory() / "host-proc-pid-stat" / name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST(ProcessStat, RealStatFilesGiveNameFlagsAndStartTime) {
  const auto init = parseProcessStat(fixture("init"));
  ASSERT_TRUE(init) << init.error().message;
  EXPECT_EQ(init->comm, "process_api");
  EXPECT_EQ(init->startTicks, 30u);
  EXPECT_EQ(init->userTicks, 85u);
  EXPECT_EQ(init->systemTicks, 380u);
  EXPECT_FALSE(init->isKernelThread());
  const auto kthreadd = parseProcessStat(fixture("kthreadd"));
  ASSERT_TRUE(kthreadd);
  EXPECT_TRUE(kthreadd->isKernelThread());
  EXPECT_TRUE(parseProcessStat(fixture("ksoftirqd"))->isKernelThread());
}

TEST(ProcessStat, ANameWithParenthesesAndSpacesDoesNotShiftTheFields) {
  const auto odd = parseProcessStat(fixture("user-odd-comm"));
  ASSERT_TRUE(odd) << odd.error().message;
  EXPECT_EQ(odd->comm, "odd) name (x");
  EXPECT_EQ(odd->flags, 4194304u);
  EXPECT_EQ(odd->startTicks, 117508u);
  EXPECT_FALSE(odd->isKernelThread());
}

TEST(ProcessStat, AnythingElseIsAnError) {
  EXPECT_FALSE(parseProcessStat(""));
  EXPECT_FALSE(parseProcessStat("garbage"));
  EXPECT_FALSE(parseProcessStat("12 (short) S 1 2 3"));
  std::string line = fixture("init");
  line.replace(line.find(" 30 "), 4, " -3 ");  // a negative start time
  EXPECT_FALSE(parseProcessStat(line));
}
