// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/topology.h"

#include <gtest/gtest.h>

#include "fixture_tree.h"

using vcpufold::agent::readTopology;
using vcpufold::protocol::CpuSet;
using vcpufold::testing::FixtureTree;

TEST(Topology, LabGuestFourVcpus) {
  FixtureTree tree("lab-guest-4vcpu");
  auto topology = readTopology(tree.fs());
  ASSERT_TRUE(topology) << topology.error().message;
  EXPECT_EQ(topology->online, CpuSet::range(0, 3));
  EXPECT_EQ(topology->housekeeping, CpuSet::range(0, 3));
  EXPECT_EQ(topology->cores.size(), 4u);
  EXPECT_EQ(topology->threadsPerCore, 1u);
  EXPECT_EQ(topology->numaNodes, 1u);
}

TEST(Topology, SmtTwoNumaNodes) {
  FixtureTree tree("guest-smt2-numa2");
  auto topology = readTopology(tree.fs());
  ASSERT_TRUE(topology) << topology.error().message;
  EXPECT_EQ(topology->threadsPerCore, 2u);
  EXPECT_EQ(topology->numaNodes, 2u);
  ASSERT_EQ(topology->cores.size(), 4u);
  EXPECT_EQ(topology->cores[0].threads, (CpuSet{0, 1}));
  EXPECT_EQ(topology->cores[0].node, 0u);
  EXPECT_EQ(topology->cores[3].threads, (CpuSet{6, 7}));
  EXPECT_EQ(topology->cores[3].node, 1u);
}

TEST(Topology, NohzFullAndIsolatedAreNotHousekeeping) {
  FixtureTree tree("guest-nohz-full");
  auto topology = readTopology(tree.fs());
  ASSERT_TRUE(topology) << topology.error().message;
  EXPECT_EQ(topology->housekeeping, (CpuSet{0, 1}));
  EXPECT_EQ(topology->online, CpuSet::range(0, 3));
}

TEST(Topology, OfflineCpusAreLeftOut) {
  FixtureTree tree("guest-offline-cpus");
  auto topology = readTopology(tree.fs());
  ASSERT_TRUE(topology) << topology.error().message;
  EXPECT_EQ(topology->possible, CpuSet::range(0, 7));
  EXPECT_EQ(topology->online, (CpuSet{0, 1, 3}));
  EXPECT_EQ(topology->cores.size(), 3u);
}

TEST(Topology, NullNohzFullIsEmpty) {
  FixtureTree tree("lab-guest-4vcpu");
  ASSERT_NE(tree.read("/sys/devices/system/cpu/nohz_full").find("(null)"), std::string::npos)
      << "the captured 6.1 kernel prints (null) here";
  EXPECT_EQ(readTopology(tree.fs())->housekeeping, CpuSet::range(0, 3));
}

TEST(Topology, SiblingsOfOfflineThreadsAndMissingFiles) {
  FixtureTree tree("guest-smt2-numa2");
  // CPU 3 goes offline: core {2,3} shrinks to {2}.
  tree.write("/sys/devices/system/cpu/online", "0-2,4-7\n");
  tree.remove("/sys/devices/system/cpu/cpu3/topology");
  auto topology = readTopology(tree.fs());
  ASSERT_TRUE(topology);
  ASSERT_EQ(topology->cores.size(), 4u);
  EXPECT_EQ(topology->cores[1].threads, (CpuSet{2}));
  // A minimal kernel without topology or node directories: one core per CPU, one node.
  tree.remove("/sys/devices/system/node");
  for (int cpu = 0; cpu < 8; ++cpu) tree.remove("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology");
  topology = readTopology(tree.fs());
  ASSERT_TRUE(topology);
  EXPECT_EQ(topology->cores.size(), 7u);
  EXPECT_EQ(topology->numaNodes, 1u);
}

TEST(Topology, EverythingIsolatedFallsBackToAllOnline) {
  FixtureTree tree("lab-guest-4vcpu");
  tree.write("/sys/devices/system/cpu/isolated", "0-3\n");
  EXPECT_EQ(readTopology(tree.fs())->housekeeping, CpuSet::range(0, 3));
}

TEST(Topology, UnreadableOnlineListIsAnError) {
  FixtureTree tree("lab-guest-4vcpu");
  tree.write("/sys/devices/system/cpu/online", "0-3,2\n");
  auto topology = readTopology(tree.fs());
  ASSERT_FALSE(topology);
  EXPECT_NE(topology.error().message.find("online"), std::string::npos) << topology.error().message;
  tree.remove("/sys/devices/system/cpu/online");
  EXPECT_FALSE(readTopology(tree.fs()));
}
