// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/protocol/cpulist.h"

#include <gtest/gtest.h>

#include <random>

using vcpufold::protocol::CpuSet;
using vcpufold::protocol::formatCpuList;
using vcpufold::protocol::kMaxCpus;
using vcpufold::protocol::parseCpuList;
using vcpufold::protocol::parseCpuListFile;

TEST(CpuList, ParsesKernelForms) {
  EXPECT_EQ(*parseCpuList("0-3,8,10-11"), (CpuSet{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(*parseCpuList("5"), (CpuSet{5}));
  EXPECT_EQ(*parseCpuList("0,1"), (CpuSet{0, 1}));
  EXPECT_EQ(*parseCpuList("4095"), (CpuSet{4095}));
  EXPECT_TRUE(parseCpuList("")->empty());
  EXPECT_EQ(parseCpuList("0-4095")->size(), kMaxCpus);
}

TEST(CpuList, SysfsFileAllowsOneTrailingNewline) {
  EXPECT_EQ(*parseCpuListFile("0-1\n"), (CpuSet{0, 1}));
  EXPECT_TRUE(parseCpuListFile("\n")->empty());
  EXPECT_FALSE(parseCpuListFile("0-1\n\n"));
}

TEST(CpuList, RejectsEverythingNotCanonicalEnough) {
  for (const char* bad : {" 0", "0 ", "0,", ",0", "0,,1", "1-0", "3,1", "0-3,2", "0-3,3", "-1", "+1", "01",
                          "00", "0x1", "a", "0-", "-", "0--1", "0-7:2/4", "4096", "0-4096", "99999999999999999999",
                          "1,0", "0\n1"}) {
    EXPECT_FALSE(parseCpuList(bad)) << "accepted \"" << bad << "\"";
  }
  EXPECT_FALSE(parseCpuList(std::string_view("0\0", 2)));
}

TEST(CpuList, ErrorSaysWhereAndWhat) {
  auto result = parseCpuList("0-3,2");
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("ascending"), std::string::npos) << result.error().message;
  EXPECT_NE(result.error().message.find("offset 4"), std::string::npos) << result.error().message;
}

TEST(CpuList, FormatsRunsAsRanges) {
  EXPECT_EQ(formatCpuList(CpuSet{}), "");
  EXPECT_EQ(formatCpuList(CpuSet{0}), "0");
  EXPECT_EQ(formatCpuList(CpuSet{0, 1}), "0-1");
  EXPECT_EQ(formatCpuList(CpuSet{0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(formatCpuList(CpuSet{1, 3, 5}), "1,3,5");
}

TEST(CpuList, RandomSetsRoundTrip) {
  std::mt19937 random(42);
  for (int round = 0; round < 2000; ++round) {
    CpuSet set;
    const auto span = static_cast<unsigned>(1u + random() % 300u);
    const auto density = static_cast<unsigned>(random() % 100u);
    for (unsigned cpu = 0; cpu < span; ++cpu)
      if (random() % 100u < density) set.insert(cpu);
    const std::string text = formatCpuList(set);
    auto parsed = parseCpuList(text);
    ASSERT_TRUE(parsed) << text << ": " << parsed.error().message;
    ASSERT_EQ(*parsed, set) << text;
    ASSERT_EQ(formatCpuList(*parsed), text);
  }
}

TEST(CpuSet, SetOperations) {
  const CpuSet a{0, 1, 2, 3};
  const CpuSet b{2, 3, 4};
  EXPECT_EQ(a & b, (CpuSet{2, 3}));
  EXPECT_EQ(a | b, (CpuSet{0, 1, 2, 3, 4}));
  EXPECT_EQ(a - b, (CpuSet{0, 1}));
  EXPECT_TRUE((CpuSet{1, 2}).isSubsetOf(a));
  EXPECT_FALSE(b.isSubsetOf(a));
  EXPECT_EQ(a.first(), 0u);
  EXPECT_EQ(b.last(), 4u);
  EXPECT_FALSE(CpuSet{}.first());
  EXPECT_EQ(CpuSet::range(2, 4), (CpuSet{2, 3, 4}));
  EXPECT_TRUE(CpuSet::range(4, 2).empty());
  CpuSet outOfRange;
  outOfRange.insert(static_cast<unsigned>(kMaxCpus));
  EXPECT_TRUE(outOfRange.empty());
  EXPECT_FALSE(outOfRange.contains(static_cast<unsigned>(kMaxCpus)));
}
