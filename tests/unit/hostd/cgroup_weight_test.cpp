// SPDX-License-Identifier: GPL-2.0-or-later
// A VM's CPU weight from its QEMU process's cgroup (the QMP backend): v1 on a
// real /proc/PID/cgroup captured on this machine kind (separate cpu and
// cpuacct hierarchies, the process in cpu:/vcpufold-fixture/vm100 with
// cpu.shares 2048), and v2 as Proxmox lays it out (qemu.slice/ID.scope).

#include "vcpufold/hostd/cgroup_weight.h"

#include <gtest/gtest.h>

#include "fixture_tree.h"
#include "vcpufold/hostd/tick.h"

using namespace vcpufold::hostd;
using vcpufold::testing::FixtureTree;

TEST(CgroupWeight, CgroupV1SharesOfTheCpuHierarchy) {
  FixtureTree tree("host-cgroup1-process");
  const auto shares = readProcessCpuWeight(tree.fs(), 6873, false);
  ASSERT_TRUE(shares) << shares.error().message;
  EXPECT_EQ(*shares, 2048.0);
  VmRecord vm;
  vm.cgroupWeight = *shares;
  EXPECT_EQ(effectiveWeight(vm, false), 200.0) << "1024 shares are weight 100";
  // Co-mounted controllers name their directory by the list.
  const auto comounted = parseCpuCgroup("3:cpu,cpuacct:/machine.slice/vm\n1:name=systemd:/\n", false);
  ASSERT_TRUE(comounted);
  EXPECT_EQ(comounted->mount, "cpu,cpuacct");
  EXPECT_EQ(comounted->path, "/machine.slice/vm");
}

TEST(CgroupWeight, CgroupV2WeightOfTheProcessScope) {
  FixtureTree tree("");
  tree.write("/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
  tree.write("/proc/4242/cgroup", "0::/qemu.slice/100.scope\n");
  tree.write("/sys/fs/cgroup/qemu.slice/100.scope/cpu.weight", "250\n");
  const auto weight = readProcessCpuWeight(tree.fs(), 4242, true);
  ASSERT_TRUE(weight) << weight.error().message;
  EXPECT_EQ(*weight, 250.0);
  VmRecord vm;
  vm.cgroupWeight = *weight;
  EXPECT_EQ(effectiveWeight(vm, true), 250.0);
  vm.policy.weight = 300;
  EXPECT_EQ(effectiveWeight(vm, true), 300.0) << "a [[vm]] weight wins";
}

TEST(CgroupWeight, AnythingElseIsAnErrorAndNoWeight) {
  EXPECT_FALSE(parseCpuCgroup("0::/x\n", false)) << "v1 asked, only a v2 line";
  EXPECT_FALSE(parseCpuCgroup("1:cpuacct:/x\n", false)) << "no cpu controller";
  EXPECT_FALSE(parseCpuCgroup("0::relative\n", true));
  EXPECT_FALSE(parseCpuCgroup("0::/a/../../etc\n", true)) << "a path that climbs out of the cgroup root";
  EXPECT_FALSE(parseCpuCgroup("garbage\n", true));
  FixtureTree tree("");
  tree.write("/proc/7/cgroup", "0::/qemu.slice/7.scope\n");
  EXPECT_FALSE(readProcessCpuWeight(tree.fs(), 7, true)) << "no cpu.weight";
  tree.write("/sys/fs/cgroup/qemu.slice/7.scope/cpu.weight", "0\n");
  EXPECT_FALSE(readProcessCpuWeight(tree.fs(), 7, true));
  tree.write("/sys/fs/cgroup/qemu.slice/7.scope/cpu.weight", "max\n");
  EXPECT_FALSE(readProcessCpuWeight(tree.fs(), 7, true));
  EXPECT_FALSE(readProcessCpuWeight(tree.fs(), 8, true)) << "no such process";
}
