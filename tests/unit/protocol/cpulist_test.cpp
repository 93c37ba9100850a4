// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/protocol/cpulist.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <random>
#include <set>

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

namespace {

// The reference: a std::set of CPU numbers.
std::set<unsigned> modelOf(const CpuSet& set) {
  const auto cpus = set.toVector();
  return {cpus.begin(), cpus.end()};
}

CpuSet fromModel(const std::set<unsigned>& cpus) {
  CpuSet set;
  for (unsigned cpu : cpus) set.insert(cpu);
  return set;
}

}  // namespace

TEST(CpuSet, AgreesWithAnOrderedSetAcrossWordBoundariesUpToTheLimit) {
  std::mt19937 random(7);
  const auto draw = [&] {
    std::set<unsigned> cpus;
    const unsigned span = 1u + static_cast<unsigned>(random() % kMaxCpus);
    const unsigned count = static_cast<unsigned>(random() % 70u);
    for (unsigned i = 0; i < count; ++i) cpus.insert(static_cast<unsigned>(random() % span));
    return cpus;
  };
  for (int round = 0; round < 3000; ++round) {
    const std::set<unsigned> a = draw();
    const std::set<unsigned> b = draw();
    const CpuSet setA = fromModel(a);
    const CpuSet setB = fromModel(b);
    ASSERT_EQ(modelOf(setA), a);
    ASSERT_EQ(setA.size(), a.size());
    ASSERT_EQ(setA.empty(), a.empty());
    ASSERT_EQ(setA.first(), a.empty() ? std::nullopt : std::optional<unsigned>(*a.begin()));
    ASSERT_EQ(setA.last(), a.empty() ? std::nullopt : std::optional<unsigned>(*a.rbegin()));
    std::set<unsigned> both, either, onlyA;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::inserter(both, both.end()));
    std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::inserter(either, either.end()));
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::inserter(onlyA, onlyA.end()));
    // Equality is of the sets: a result equals the same set built by inserts.
    ASSERT_EQ(setA & setB, fromModel(both));
    ASSERT_EQ(setA | setB, fromModel(either));
    ASSERT_EQ(setA - setB, fromModel(onlyA));
    ASSERT_EQ(setA.isSubsetOf(setB), std::includes(b.begin(), b.end(), a.begin(), a.end()));
    ASSERT_EQ(setA == setB, a == b);
    for (unsigned probe = 0; probe < 8; ++probe) {
      const unsigned cpu = static_cast<unsigned>(random() % (kMaxCpus + 10));
      ASSERT_EQ(setA.contains(cpu), a.count(cpu) == 1) << cpu;
    }
  }
}

TEST(CpuSet, ErasingTheHighestCpusLeavesASetEqualToOneNeverGrown) {
  CpuSet grown{1, 5};
  grown.insert(4000);
  grown.insert(130);
  EXPECT_NE(grown, (CpuSet{1, 5}));
  grown.erase(4000);
  grown.erase(130);
  EXPECT_EQ(grown, (CpuSet{1, 5}));
  EXPECT_EQ(grown.last(), 5u);
  CpuSet one{63};
  one.erase(63);
  EXPECT_EQ(one, CpuSet{});
  EXPECT_TRUE(one.empty());
  EXPECT_EQ(CpuSet::range(3, 4000) - CpuSet::range(64, 4000), CpuSet::range(3, 63));
}

TEST(CpuSet, RangesMatchInsertsAtEveryWordEdge) {
  const unsigned edges[] = {0, 1, 62, 63, 64, 65, 127, 128, 129, 4094, 4095};
  for (unsigned first : edges)
    for (unsigned last : edges) {
      std::set<unsigned> expected;
      for (unsigned cpu = first; cpu <= last; ++cpu) expected.insert(cpu);
      EXPECT_EQ(CpuSet::range(first, last), fromModel(expected)) << first << "-" << last;
    }
  EXPECT_EQ(CpuSet::range(4090, 5000), CpuSet::range(4090, static_cast<unsigned>(kMaxCpus - 1)));
  EXPECT_TRUE(CpuSet::range(static_cast<unsigned>(kMaxCpus), 5000).empty());
}
