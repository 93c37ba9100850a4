// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/placement.h"

#include <gtest/gtest.h>

#include <functional>

#include "fixture_tree.h"

using namespace vcpufold::agent;
using vcpufold::protocol::CpuSet;
using vcpufold::testing::FixtureTree;

namespace {

Topology topologyOf(const std::string& fixture, const std::function<void(FixtureTree&)>& change = {}) {
  FixtureTree tree(fixture);
  if (change) change(tree);
  auto topology = readTopology(tree.fs());
  EXPECT_TRUE(topology) << topology.error().message;
  return *topology;
}

// Every property placement promises, for every k on one topology.
void checkAllSizes(const Topology& topology, const std::string& name) {
  SCOPED_TRACE(name);
  const PlacementPlan plan(topology);
  ASSERT_EQ(plan.coreCount(), topology.cores.size());
  const unsigned firstHousekeeping = *topology.housekeeping.first();
  const auto onlineCount = static_cast<unsigned>(topology.online.size());
  CpuSet previous;
  for (unsigned k = 0; k <= onlineCount + 2; ++k) {
    SCOPED_TRACE("k=" + std::to_string(k));
    const Placement placement = plan.forCpus(k);
    const CpuSet& cpus = placement.cpus;
    EXPECT_FALSE(cpus.empty());
    EXPECT_TRUE(cpus.isSubsetOf(topology.online)) << "only online CPUs";
    EXPECT_TRUE(cpus.contains(firstHousekeeping)) << "the first housekeeping CPU is kept";
    for (const Core& core : topology.cores) {
      const auto kept = (core.threads & cpus).size();
      EXPECT_TRUE(kept == 0 || kept == core.threads.size()) << "whole cores";
    }
    EXPECT_TRUE(previous.isSubsetOf(cpus)) << "set for k-1 within set for k";
    // Housekeeping cores first: a set that takes in an isolated or nohz_full
    // CPU holds every housekeeping core already.
    CpuSet housekeepingCores;
    for (const Core& core : topology.cores)
      if (core.threads.isSubsetOf(topology.housekeeping)) housekeepingCores = housekeepingCores | core.threads;
    if (!cpus.isSubsetOf(topology.housekeeping)) {
      EXPECT_TRUE(housekeepingCores.isSubsetOf(cpus)) << "an isolated CPU before a housekeeping one";
    }
    // Enough CPUs, and no whole core more than needed.
    EXPECT_GE(cpus.size(), std::min(std::max(k, 1u), onlineCount));
    if (placement.cores > 1) {
      EXPECT_LT(plan.forCores(placement.cores - 1).size(), std::max(k, 1u));
    }
    EXPECT_EQ(placement.adjusted, cpus.size() != k);
    EXPECT_EQ(plan.coresWithin(cpus), placement.cores);
    previous = cpus;
  }
  EXPECT_EQ(plan.forCpus(onlineCount + 100).cpus, topology.online) << "clamped to all online CPUs";
  EXPECT_EQ(plan.forCpus(0).cores, 1u) << "clamped to one core";
}

}  // namespace

TEST(Placement, PropertiesHoldOnEveryFixtureForEveryK) {
  for (const char* fixture :
       {"lab-guest-4vcpu", "guest-smt2-numa2", "guest-nohz-full", "guest-offline-cpus", "guest-numa2-isolated"})
    checkAllSizes(topologyOf(fixture), fixture);
  // Variations: an offline SMT sibling, a housekeeping CPU that is not CPU 0,
  // unequal NUMA nodes.
  checkAllSizes(topologyOf("guest-smt2-numa2",
                           [](FixtureTree& tree) {
                             tree.write("/sys/devices/system/cpu/online", "0-4,6-7\n");
                             tree.remove("/sys/devices/system/cpu/cpu5/topology");
                           }),
                "smt2-numa2 with cpu5 offline");
  checkAllSizes(topologyOf("guest-nohz-full",
                           [](FixtureTree& tree) {
                             tree.write("/sys/devices/system/cpu/nohz_full", "0-1\n");
                             tree.write("/sys/devices/system/cpu/isolated", "\n");
                           }),
                "housekeeping starts at cpu2");
  checkAllSizes(topologyOf("guest-smt2-numa2",
                           [](FixtureTree& tree) {
                             tree.write("/sys/devices/system/node/node0/cpulist", "0-1\n");
                             tree.write("/sys/devices/system/node/node1/cpulist", "2-7\n");
                           }),
                "nodes of 1 and 3 cores");
}

TEST(Placement, SmtKeepsSiblingsAndAlternatesNodes) {
  const PlacementPlan plan(topologyOf("guest-smt2-numa2"));
  EXPECT_EQ(plan.forCpus(1).cpus, (CpuSet{0, 1})) << "one CPU rounds up to a whole core";
  EXPECT_TRUE(plan.forCpus(1).adjusted);
  EXPECT_EQ(plan.forCpus(3).cpus, (CpuSet{0, 1, 4, 5})) << "second core from the other node";
  EXPECT_EQ(plan.forCpus(6).cpus, (CpuSet{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(plan.forCpus(8).cpus, CpuSet::range(0, 7));
  EXPECT_FALSE(plan.forCpus(8).adjusted);
}

TEST(Placement, NohzFullCpusAreKeptLast) {
  const PlacementPlan plan(topologyOf("guest-nohz-full"));
  EXPECT_EQ(plan.forCpus(2).cpus, (CpuSet{0, 1}));
  EXPECT_EQ(plan.forCpus(3).cpus, (CpuSet{0, 1, 2}));
}

TEST(Placement, HousekeepingCoreFirstEvenWhenNotCpuZero) {
  const PlacementPlan plan(topologyOf("guest-nohz-full", [](FixtureTree& tree) {
    tree.write("/sys/devices/system/cpu/nohz_full", "0-1\n");
    tree.write("/sys/devices/system/cpu/isolated", "\n");
  }));
  EXPECT_EQ(plan.forCpus(1).cpus, (CpuSet{2}));
  EXPECT_EQ(plan.forCpus(2).cpus, (CpuSet{2, 3}));
}

TEST(Placement, NodesStayProportional) {
  // 1 core on node 0, 3 on node 1: node 1 is never more than a core behind its share.
  const Topology topology = topologyOf("guest-smt2-numa2", [](FixtureTree& tree) {
    tree.write("/sys/devices/system/node/node0/cpulist", "0-1\n");
    tree.write("/sys/devices/system/node/node1/cpulist", "2-7\n");
  });
  const PlacementPlan plan(topology);
  for (std::size_t n = 1; n <= plan.coreCount(); ++n) {
    const CpuSet cpus = plan.forCores(n);
    const double node1Share = static_cast<double>((cpus & CpuSet::range(2, 7)).size()) / 6.0;
    const double overall = static_cast<double>(cpus.size()) / 8.0;
    EXPECT_GE(node1Share + 2.0 / 6.0 + 1e-9, overall) << "n=" << n;
  }
}

TEST(Placement, IsolationWinsOverNumaProportion) {
  // Two nodes of 4 CPUs; nohz_full and isolcpus on 5-7 of node 1. Folding to 5
  // keeps the five housekeeping CPUs, never an isolated one beside an unused
  // housekeeping CPU on node 0.
  const Topology topology = topologyOf("guest-numa2-isolated");
  ASSERT_EQ(topology.numaNodes, 2u);
  ASSERT_EQ(topology.housekeeping, CpuSet::range(0, 4));
  const PlacementPlan plan(topology);
  EXPECT_EQ(plan.forCpus(5).cpus, CpuSet::range(0, 4));
  EXPECT_EQ(plan.forCpus(2).cpus, (CpuSet{0, 4})) << "nodes proportional among housekeeping cores";
  EXPECT_EQ(plan.forCpus(6).cpus, CpuSet::range(0, 5)) << "then the isolated ones";
}
