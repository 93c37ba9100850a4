// SPDX-License-Identifier: GPL-2.0-or-later
#include "count_space.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "search_space.h"

using namespace vcpufold::bench;

namespace {

std::vector<CountRange> identical(unsigned vms, unsigned low, unsigned high) {
  return std::vector<CountRange>(vms, CountRange{low, high, 0, false});
}

// A measuring function that counts its calls per candidate.
struct Model {
  std::function<double(const std::vector<unsigned>&)> rate;
  std::map<std::vector<unsigned>, unsigned> calls;
  MeasureCounts measure() {
    return [this](const std::vector<unsigned>& counts) {
      ++calls[counts];
      return rate(counts);
    };
  }
};

}  // namespace

TEST(CountSpace, IdenticalVmsAreFoldedBySymmetry) {
  // Three interchangeable VMs of 1..4: 20 multisets, not 64 orderings.
  const auto space = identical(3, 1, 4);
  EXPECT_EQ(distinctAssignments(space, 1000), 20u);
  const auto all = enumerateAssignments(space);
  ASSERT_EQ(all.size(), 20u);
  std::set<std::vector<unsigned>> distinct(all.begin(), all.end());
  EXPECT_EQ(distinct.size(), 20u);
  // Every ordering of the 64 lands on one of them.
  for (unsigned a = 1; a <= 4; ++a)
    for (unsigned b = 1; b <= 4; ++b)
      for (unsigned c = 1; c <= 4; ++c) EXPECT_TRUE(distinct.count(canonical(space, {a, b, c})));
  EXPECT_EQ(canonical(space, {1, 4, 2}), (std::vector<unsigned>{4, 2, 1}));

  // Two classes and a fixed VM: 10 x 4 x 1.
  std::vector<CountRange> mixed{{1, 4, 0, false}, {1, 4, 0, false}, {1, 4, 1, false}, {4, 4, 2, false}};
  EXPECT_EQ(distinctAssignments(mixed, 1000), 40u);
  EXPECT_EQ(enumerateAssignments(mixed).size(), 40u);
  // A class whose members' ranges differ is not sorted across them.
  std::vector<CountRange> ranges{{1, 2, 0, false}, {1, 4, 0, false}};
  EXPECT_EQ(distinctAssignments(ranges, 1000), 8u);
  EXPECT_EQ(canonical(ranges, {1, 4}), (std::vector<unsigned>{1, 4}));
}

TEST(CountSpace, CountingStopsAboveTheCap) {
  std::vector<CountRange> space;
  for (unsigned i = 0; i < 6; ++i) space.push_back({1, 16, i, true});
  EXPECT_EQ(distinctAssignments(space, 200), 201u);
  EXPECT_EQ(distinctAssignments(identical(40, 1, 64), 200), 201u);
  EXPECT_EQ(clampedInto(space, {0, 20, 5}), (std::vector<unsigned>{1, 16, 5, 1, 1, 1}));
}

TEST(CountSearch, ExhaustiveFindsAPlantedOptimumTheDescentMisses) {
  // Flat everywhere but one assignment: no move from the start gains 3%, so
  // a descent stays put; the exhaustive search measures the planted one.
  std::vector<CountRange> space{{1, 4, 0, false}, {1, 4, 0, false}, {1, 3, 1, false}};
  Model model;
  model.rate = [](const std::vector<unsigned>& counts) {
    return counts == std::vector<unsigned>{3, 1, 3} ? 150.0 : 100.0;
  };
  const auto search = searchCounts(space, {{2, 2, 2}}, model.measure(), 1000, 200);
  EXPECT_TRUE(search.exhaustive);
  EXPECT_EQ(search.best, (std::vector<unsigned>{3, 1, 3}));
  EXPECT_DOUBLE_EQ(search.bestRate, 150.0);
  EXPECT_EQ(search.measurements, distinctAssignments(space, 1000));
  EXPECT_EQ(search.descentEnd, (std::vector<unsigned>{2, 2, 2}));
  EXPECT_DOUBLE_EQ(search.descentRate, 100.0);
  // Nothing measured twice, and only canonical assignments.
  for (const auto& [counts, calls] : model.calls) {
    EXPECT_EQ(calls, 1u);
    EXPECT_EQ(canonical(space, counts), counts);
  }
  EXPECT_EQ(search.ranked.front().first, search.best);
}

TEST(CountSearch, TooLargeASpaceIsSearchedFromEveryStart) {
  // Two basins: a gentle hill around the static-fair start peaking at 4/4/4,
  // and a higher peak at 1/1/1 that only the always-1 start climbs to.
  std::vector<CountRange> space;
  for (unsigned i = 0; i < 3; ++i) space.push_back({1, 8, i, false});
  Model model;
  model.rate = [](const std::vector<unsigned>& c) {
    double nearFour = 0, nearOne = 0;
    for (unsigned v : c) {
      nearFour += std::abs(static_cast<double>(v) - 4);
      nearOne += static_cast<double>(v) - 1;
    }
    return std::max(200.0 - 10 * nearFour, 400.0 - 60 * nearOne);
  };
  const std::vector<std::vector<unsigned>> starts{{5, 5, 5}, {1, 1, 1}, {8, 8, 8}};
  const auto search = searchCounts(space, starts, model.measure(), 500, 100);
  EXPECT_FALSE(search.exhaustive);
  EXPECT_FALSE(search.budgetSpent);
  EXPECT_EQ(search.best, (std::vector<unsigned>{1, 1, 1}));
  EXPECT_EQ(search.descentEnd, (std::vector<unsigned>{4, 4, 4}));
  EXPECT_LT(search.measurements, 512u);  // far from all 8^3
  for (const auto& [counts, calls] : model.calls) EXPECT_EQ(calls, 1u);

  // The same with only the static-fair start: the higher peak is not found.
  const auto single = searchCounts(space, {{5, 5, 5}}, model.measure(), 500, 100);
  EXPECT_EQ(single.best, (std::vector<unsigned>{4, 4, 4}));
}

TEST(CountSearch, ABudgetTooSmallStopsTheDescentsAndSaysSo) {
  std::vector<CountRange> space;
  for (unsigned i = 0; i < 4; ++i) space.push_back({1, 16, i, true});
  Model model;
  model.rate = [](const std::vector<unsigned>& c) { return static_cast<double>(c[0] + c[1] + c[2] + c[3]); };
  const auto search = searchCounts(space, {{2, 2, 2, 2}, {1, 1, 1, 1}}, model.measure(), 12, 200);
  EXPECT_FALSE(search.exhaustive);
  EXPECT_TRUE(search.budgetSpent);
  EXPECT_LE(search.measurements, 12u);
  // Within the budget the climb still went up from the start.
  EXPECT_GT(search.bestRate, 8.0);
}

TEST(CountSearch, LargeVmsMoveByHalvingAndDoublingToo) {
  // One VM of 16 vCPUs, throughput growing with its count: from 4 the descent
  // doubles to 8, then to 16, without trying the counts in between.
  const std::vector<CountRange> space{{1, 16, 0, true}};
  Model model;
  model.rate = [](const std::vector<unsigned>& c) { return static_cast<double>(c[0]); };
  const auto search = searchCounts(space, {{4}}, model.measure(), 100, 0);
  EXPECT_FALSE(search.exhaustive);
  EXPECT_EQ(search.best, std::vector<unsigned>{16});
  EXPECT_TRUE(model.calls.count({8}));
  for (unsigned skipped : {6u, 10u, 11u, 12u, 13u, 14u}) EXPECT_FALSE(model.calls.count({skipped})) << skipped;
}

TEST(SearchSpace, FixesWhatNobodyFoldsAndGroupsWhatIsAlike) {
  Scenario scenario;
  scenario.pcpus = 2;
  const auto vm = [](std::string name, unsigned vcpus, bool agent) {
    VmSpec spec;
    spec.name = std::move(name);
    spec.vcpus = vcpus;
    spec.agent = agent;
    spec.workload = "spinlock";
    return spec;
  };
  scenario.vms = {vm("a", 4, true), vm("b", 4, true), vm("c", 4, true), vm("d", 8, false), vm("e", 8, true)};
  const auto space = searchSpaceOf(scenario, {4, 4, 2, 8, 0}, {2, 2, 2, 4, 3});
  EXPECT_EQ(space[0].low, 1u);
  EXPECT_EQ(space[0].high, 4u);
  EXPECT_EQ(space[0].symmetryClass, space[1].symmetryClass);  // alike, same tasks
  EXPECT_NE(space[0].symmetryClass, space[2].symmetryClass);  // fewer tasks
  EXPECT_EQ(space[2].high, 2u);                               // no more preferred vCPUs than tasks
  EXPECT_EQ(space[3].low, 8u);                                // no agent: all of them
  EXPECT_EQ(space[3].high, 8u);
  EXPECT_EQ(space[4].low, 3u);  // idle: where it was
  EXPECT_EQ(space[4].high, 3u);
  EXPECT_TRUE(space[4].bigSteps);
  EXPECT_FALSE(space[0].bigSteps);
  EXPECT_EQ(distinctAssignments(space, 1000), 10u * 2u);

  const auto starts = searchStarts(scenario, {4, 4, 2, 8, 0}, {1, 1, 1, 8, 1}, 7);
  ASSERT_EQ(starts.size(), 5u);
  EXPECT_EQ(starts[0], (std::vector<unsigned>{1, 1, 1, 8, 1}));
  EXPECT_EQ(starts[1], (std::vector<unsigned>{1, 1, 1, 1, 1}));
  EXPECT_EQ(starts[2], (std::vector<unsigned>{4, 4, 4, 8, 8}));
  EXPECT_EQ(starts[3], (std::vector<unsigned>{4, 4, 2, 8, 1}));
  for (std::size_t i = 0; i < scenario.vms.size(); ++i) {
    EXPECT_GE(starts[4][i], 1u);
    EXPECT_LE(starts[4][i], scenario.vms[i].vcpus);
  }
  EXPECT_EQ(searchStarts(scenario, {4, 4, 2, 8, 0}, {1, 1, 1, 8, 1}, 7)[4], starts[4]);
}
