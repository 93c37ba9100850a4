// SPDX-License-Identifier: GPL-2.0-or-later
// Weighted max-min fair shares over overlapping sets of pCPUs, checked on
// thousands of random cases against what can be verified without the code
// under test: Hall's condition by enumerating subsets (the shares fit the
// places), a brute-force progressive filling over every subset (max-min
// optimality), and the one-pool water-filling law where the pools are disjoint.

#include "vcpufold/hostd/fair_share.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace vcpufold::hostd;

namespace {

constexpr double kTolerance = 1e-3;

double weightOf(const SharingProblem& problem, std::size_t i) { return std::max(problem.weights[i], 1e-9); }

// The capacity of the places any claimant of `members` (a bit mask) may use.
double reachableCapacity(const SharingProblem& problem, unsigned members) {
  std::vector<bool> reached(problem.placeCapacity.size(), false);
  for (std::size_t i = 0; i < problem.demands.size(); ++i)
    if (members & (1u << i))
      for (std::size_t p : problem.placesOf[i]) reached[p] = true;
  double capacity = 0;
  for (std::size_t p = 0; p < reached.size(); ++p)
    if (reached[p]) capacity += problem.placeCapacity[p];
  return capacity;
}

// Hall's condition: amounts fit iff every subset of claimants asks no more
// than the places it may use hold.
bool fitsByEnumeration(const SharingProblem& problem, const std::vector<double>& amounts, double slack) {
  const unsigned subsets = 1u << problem.demands.size();
  for (unsigned members = 1; members < subsets; ++members) {
    double asked = 0;
    for (std::size_t i = 0; i < problem.demands.size(); ++i)
      if (members & (1u << i)) asked += amounts[i];
    if (asked > reachableCapacity(problem, members) + slack) return false;
  }
  return true;
}

// Progressive filling with the tight sets found by enumeration, not by flow.
std::vector<double> bruteForceShares(const SharingProblem& problem) {
  const std::size_t count = problem.demands.size();
  std::vector<double> shares(count, 0.0);
  std::vector<bool> active(count);
  for (std::size_t i = 0; i < count; ++i) active[i] = problem.demands[i] > 1e-9 && !problem.placesOf[i].empty();
  const auto atLevel = [&](double level) {
    std::vector<double> amounts = shares;
    for (std::size_t i = 0; i < count; ++i)
      if (active[i]) amounts[i] = std::min(problem.demands[i], level * weightOf(problem, i));
    return amounts;
  };
  double level = 0;
  while (std::count(active.begin(), active.end(), true) > 0) {
    double top = level;
    for (std::size_t i = 0; i < count; ++i)
      if (active[i]) top = std::max(top, problem.demands[i] / weightOf(problem, i));
    if (fitsByEnumeration(problem, atLevel(top), 1e-12)) return atLevel(top);
    double low = level;
    for (int step = 0; step < 80; ++step) {
      const double middle = (low + top) / 2;
      (fitsByEnumeration(problem, atLevel(middle), 1e-12) ? low : top) = middle;
    }
    level = low;
    const std::vector<double> reached = atLevel(level);
    std::vector<bool> stops(count, false);
    for (std::size_t i = 0; i < count; ++i)
      if (active[i] && problem.demands[i] <= level * weightOf(problem, i) + 1e-9) stops[i] = true;
    // Tight subsets: every active member of one stops.
    for (unsigned members = 1; members < (1u << count); ++members) {
      double asked = 0;
      for (std::size_t i = 0; i < count; ++i)
        if (members & (1u << i)) asked += reached[i];
      if (asked >= reachableCapacity(problem, members) - 1e-7)
        for (std::size_t i = 0; i < count; ++i)
          if (members & (1u << i)) stops[i] = true;
    }
    bool any = false;
    for (std::size_t i = 0; i < count; ++i)
      if (active[i] && stops[i]) {
        shares[i] = reached[i];
        active[i] = false;
        any = true;
      }
    if (!any) return reached;
  }
  return shares;
}

SharingProblem randomProblem(std::mt19937& random, bool disjoint) {
  std::uniform_int_distribution<std::size_t> placeCount(1, 4), claimantCount(1, 5);
  std::uniform_real_distribution<double> capacity(0.0, 3.0), demand(0.0, 4.0);
  std::uniform_int_distribution<int> weight(0, 3), coin(0, 1);
  SharingProblem problem;
  problem.placeCapacity.resize(placeCount(random));
  for (double& place : problem.placeCapacity) place = capacity(random);
  const std::size_t claimants = claimantCount(random);
  for (std::size_t i = 0; i < claimants; ++i) {
    std::vector<std::size_t> places;
    if (disjoint) {
      places.push_back(std::uniform_int_distribution<std::size_t>(0, problem.placeCapacity.size() - 1)(random));
    } else {
      for (std::size_t p = 0; p < problem.placeCapacity.size(); ++p)
        if (coin(random)) places.push_back(p);
      if (places.empty()) places.push_back(0);
    }
    problem.placesOf.push_back(places);
    problem.demands.push_back(coin(random) ? demand(random) : std::floor(demand(random)));
    constexpr double kWeights[] = {50, 100, 200, 400};
    problem.weights.push_back(kWeights[weight(random)]);
  }
  return problem;
}

std::string describe(const SharingProblem& problem, const std::vector<double>& shares) {
  std::string text;
  for (std::size_t p = 0; p < problem.placeCapacity.size(); ++p)
    text += "place " + std::to_string(p) + " capacity " + std::to_string(problem.placeCapacity[p]) + "\n";
  for (std::size_t i = 0; i < problem.demands.size(); ++i) {
    text += "claimant " + std::to_string(i) + " demand " + std::to_string(problem.demands[i]) + " weight " +
            std::to_string(problem.weights[i]) + " places";
    for (std::size_t p : problem.placesOf[i]) text += " " + std::to_string(p);
    text += " share " + std::to_string(shares[i]) + "\n";
  }
  return text;
}

}  // namespace

TEST(MaxMinShares, OverlappingPoolsKeepEveryPropertyOverThousandsOfRandomCases) {
  std::mt19937 random(20261202);
  for (int round = 0; round < 3000; ++round) {
    const SharingProblem problem = randomProblem(random, false);
    const std::vector<double> shares = maxMinShares(problem);
    ASSERT_EQ(shares.size(), problem.demands.size());
    for (std::size_t i = 0; i < shares.size(); ++i) {
      ASSERT_GE(shares[i], -1e-9) << describe(problem, shares);
      ASSERT_LE(shares[i], problem.demands[i] + 1e-9) << "above its demand\n" << describe(problem, shares);
    }
    ASSERT_TRUE(fitsByEnumeration(problem, shares, kTolerance)) << "a place over capacity\n"
                                                                << describe(problem, shares);
    const std::vector<double> expected = bruteForceShares(problem);
    for (std::size_t i = 0; i < shares.size(); ++i)
      ASSERT_NEAR(shares[i], expected[i], kTolerance) << "not max-min fair (brute force: " << expected[i] << ")\n"
                                                      << describe(problem, shares);
  }
}

TEST(MaxMinShares, DisjointPoolsGiveTheSharesWorkedOutByHand) {
  // Pool 0 (3 CPUs): demands 2, 4 and 0.5 at weights 100, 200, 100. The 0.5
  // is met; 2.5 CPUs are left at a level L with 100 L + 200 L = 2.5, L =
  // 1/120: 0.8333 and 1.6667. Pool 1 (2 CPUs): demands 1 and 1 fit.
  const SharingProblem problem{{3.0, 2.0}, {{0}, {0}, {0}, {1}, {1}}, {2.0, 4.0, 0.5, 1.0, 1.0}, {100, 200, 100, 100, 300}};
  const std::vector<double> shares = maxMinShares(problem);
  ASSERT_EQ(shares.size(), 5u);
  EXPECT_NEAR(shares[0], 2.5 / 3, 1e-6);
  EXPECT_NEAR(shares[1], 5.0 / 3, 1e-6);
  EXPECT_NEAR(shares[2], 0.5, 1e-6);
  EXPECT_NEAR(shares[3], 1.0, 1e-6);
  EXPECT_NEAR(shares[4], 1.0, 1e-6);
}

TEST(MaxMinShares, DisjointPoolsAreTheOnePoolLawInEachPool) {
  std::mt19937 random(7);
  for (int round = 0; round < 2000; ++round) {
    const SharingProblem problem = randomProblem(random, true);
    const std::vector<double> shares = maxMinShares(problem);
    for (std::size_t p = 0; p < problem.placeCapacity.size(); ++p) {
      std::vector<double> demands, weights;
      std::vector<std::size_t> members;
      for (std::size_t i = 0; i < problem.demands.size(); ++i)
        if (problem.placesOf[i].front() == p) {
          members.push_back(i);
          demands.push_back(problem.demands[i]);
          weights.push_back(problem.weights[i]);
        }
      const std::vector<double> alone = waterFill(problem.placeCapacity[p], demands, weights);
      for (std::size_t k = 0; k < members.size(); ++k)
        ASSERT_NEAR(shares[members[k]], alone[k], kTolerance) << describe(problem, shares);
    }
  }
}

TEST(MaxMinShares, AVmAloneOnItsPcpuKeepsItWhileTwoShareTheOther) {
  // pCPU 0 shared by two busy 4-vCPU VMs, pCPU 1 by one VM with one busy thread.
  const SharingProblem problem{{1.0, 1.0}, {{0}, {0}, {1}}, {4.0, 4.0, 1.0}, {100, 100, 100}};
  const std::vector<double> shares = maxMinShares(problem);
  EXPECT_NEAR(shares[0], 0.5, 1e-6);
  EXPECT_NEAR(shares[1], 0.5, 1e-6);
  EXPECT_NEAR(shares[2], 1.0, 1e-6);
}

TEST(MaxMinShares, AVmThatMayUseBothPlacesTakesWhatTheOtherLeaves) {
  // A may use pCPU 0 only, B pCPUs 0 and 1: A keeps pCPU 0, B gets pCPU 1.
  const SharingProblem narrow{{1.0, 1.0}, {{0}, {0, 1}}, {4.0, 4.0}, {100, 100}};
  const std::vector<double> shares = maxMinShares(narrow);
  EXPECT_NEAR(shares[0], 1.0, 1e-6);
  EXPECT_NEAR(shares[1], 1.0, 1e-6);
  // With weights A 100, B 300 over both pCPUs they share 1:3 of 2.
  const SharingProblem wide{{1.0, 1.0}, {{0, 1}, {0, 1}}, {4.0, 4.0}, {100, 300}};
  const std::vector<double> weighted = maxMinShares(wide);
  EXPECT_NEAR(weighted[0], 0.5, 1e-6);
  EXPECT_NEAR(weighted[1], 1.5, 1e-6);
}

TEST(MaxMinShares, FitsPlacesIsAMaximumFlow) {
  const SharingProblem problem{{1.0, 1.0}, {{0}, {0, 1}}, {0, 0}, {1, 1}};
  EXPECT_TRUE(fitsPlaces(problem, {1.0, 1.0}));
  EXPECT_FALSE(fitsPlaces(problem, {1.0, 1.1}));
  EXPECT_FALSE(fitsPlaces(problem, {1.1, 0.5})) << "A can only use place 0";
}
