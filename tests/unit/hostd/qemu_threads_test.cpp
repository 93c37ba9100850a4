// SPDX-License-Identifier: GPL-2.0-or-later
// Finding QEMU's vCPU threads from /proc, the schedstat source when libvirt
// gives no vcpu.N.delay: on the schedstat files captured from a TCG guest's
// QEMU under libvirt, with the thread names QEMU gives its threads.

#include "vcpufold/hostd/qemu_threads.h"

#include <gtest/gtest.h>

#include "fixture_tree.h"
#include "vcpufold/hostd/vm_record.h"

using namespace vcpufold::hostd;
using vcpufold::testing::FixtureTree;

namespace {

// The captured QEMU (pid 17071, vCPUs 0-3 on threads 17077-17080 as its
// query-cpus-fast said), with the names QEMU gives its threads and libvirt's pid file.
void nameCapturedThreads(FixtureTree& tree) {
  const std::string task = "/proc/17071/task/";
  for (int index = 0; index < 4; ++index) {
    const std::string tid = std::to_string(17077 + index);
    tree.write(task + tid + "/comm", "CPU " + std::to_string(index) + "/TCG\n");
    tree.write(task + tid + "/schedstat", tree.read(task + tid + "/schedstat.1"));
  }
  tree.write(task + "17071/comm", "qemu-system-x86\n");
  tree.write(task + "17071/schedstat", "1 2 3\n");
  tree.write(task + "17072/comm", "call_rcu\n");
  tree.write(task + "17076/comm", "IO mon_iothread\n");
  tree.write("/run/libvirt/qemu/fixture-a.pid", tree.read("/fixture-a.qemu-pid"));
}

}  // namespace

TEST(QemuThreads, ThreadNamesGiveTheVcpuIndex) {
  EXPECT_EQ(vcpuIndexOfThreadName("CPU 0/KVM\n"), 0u);
  EXPECT_EQ(vcpuIndexOfThreadName("CPU 13/TCG"), 13u);
  for (const char* other : {"qemu-system-x86", "CPU /KVM", "CPU x/KVM", "CPU 1", "worker", "CPU -1/KVM", ""})
    EXPECT_EQ(vcpuIndexOfThreadName(other), std::nullopt) << other;
}

TEST(QemuThreads, IndexesMustRunWithoutAGap) {
  EXPECT_EQ(*vcpuThreadsFromNames({{10, "CPU 1/KVM"}, {11, "CPU 0/KVM"}, {12, "main"}}), (std::vector<pid_t>{11, 10}));
  EXPECT_FALSE(vcpuThreadsFromNames({{10, "CPU 0/KVM"}, {11, "CPU 2/KVM"}}));
  EXPECT_FALSE(vcpuThreadsFromNames({{10, "CPU 0/KVM"}, {11, "CPU 0/KVM"}}));
  EXPECT_FALSE(vcpuThreadsFromNames({{10, "main"}}));
}

TEST(QemuThreads, SamplesTheCapturedVcpuThreadsInIndexOrder) {
  FixtureTree tree("libvirt-tcg-host");
  nameCapturedThreads(tree);
  const auto pid = readLibvirtQemuPid(tree.fs(), "fixture-a");
  ASSERT_TRUE(pid) << pid.error().message;
  EXPECT_EQ(*pid, 17071);
  const auto counters = sampleQemuVcpuThreads(tree.fs(), *pid);
  ASSERT_TRUE(counters) << counters.error().message;
  ASSERT_EQ(counters->size(), 4u);
  for (int index = 0; index < 4; ++index) {
    const auto expected =
        parseSchedstat(tree.read("/proc/17071/task/" + std::to_string(17077 + index) + "/schedstat.1"));
    ASSERT_TRUE(expected);
    EXPECT_EQ((*counters)[static_cast<std::size_t>(index)], *expected) << "vCPU " << index;
  }
}

TEST(QemuThreads, AMissingPidFileOrThreadIsAnError) {
  FixtureTree tree("libvirt-tcg-host");
  EXPECT_FALSE(readLibvirtQemuPid(tree.fs(), "fixture-a"));
  nameCapturedThreads(tree);
  tree.write("/run/libvirt/qemu/bad.pid", "not a pid\n");
  EXPECT_FALSE(readLibvirtQemuPid(tree.fs(), "bad"));
  tree.remove("/proc/17071/task/17079/schedstat");
  const auto counters = sampleQemuVcpuThreads(tree.fs(), 17071);
  ASSERT_FALSE(counters);
  EXPECT_NE(counters.error().message.find("17079"), std::string::npos) << counters.error().message;
}

// The main thread's schedstat (its main loop, which serves the hint channel),
// captured with the pinned-threads fixture: its run-queue wait is the second field.
TEST(QemuThreads, TheMainThreadsRunQueueWaitFromItsSchedstat) {
  FixtureTree tree("host-qemu-pinned-threads");
  const auto expected = parseSchedstat(tree.read("/proc/30855/task/30855/schedstat"));
  ASSERT_TRUE(expected);
  const auto waited = readMainThreadRunQueueWaitNs(tree.fs(), 30855);
  ASSERT_TRUE(waited) << waited.error().message;
  EXPECT_EQ(*waited, expected->delayNs);
  EXPECT_GT(*waited, 0u);
  tree.write("/proc/30855/task/30855/schedstat", "garbage\n");
  const auto bad = readMainThreadRunQueueWaitNs(tree.fs(), 30855);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("/proc/30855/task/30855/schedstat"), std::string::npos) << bad.error().message;
  EXPECT_FALSE(readMainThreadRunQueueWaitNs(tree.fs(), 4242)) << "no such process";
}

// A QEMU 7.2 TCG process with -name debug-threads=on as libvirt starts it,
// its vCPU 0 thread and monitor I/O thread pinned to pCPU 0 and its vCPU 1
// thread to pCPU 1 with taskset, captured from /proc (pid 30855).
TEST(QemuThreads, EachVcpuThreadsAffinityFromItsProcStatus) {
  FixtureTree tree("host-qemu-pinned-threads");
  const auto threads = findQemuVcpuThreads(tree.fs(), 30855);
  ASSERT_TRUE(threads) << threads.error().message;
  EXPECT_EQ(*threads, (std::vector<pid_t>{30858, 30859}));
  const auto affinities = readThreadAffinities(tree.fs(), 30855, *threads);
  ASSERT_TRUE(affinities) << affinities.error().message;
  ASSERT_EQ(affinities->size(), 2u);
  EXPECT_EQ((*affinities)[0], vcpufold::protocol::CpuSet{0});
  EXPECT_EQ((*affinities)[1], vcpufold::protocol::CpuSet{1});
  const VcpuPlacement placement = placementOf(*affinities, "vCPU threads' affinity");
  EXPECT_TRUE(placement.pinnedOneToOne);
  // The main thread was not pinned: both pCPUs.
  const auto main = parseCpusAllowedList(tree.read("/proc/30855/task/30855/status"));
  ASSERT_TRUE(main) << main.error().message;
  EXPECT_EQ(*main, (vcpufold::protocol::CpuSet{0, 1}));
}

TEST(QemuThreads, AStatusWithoutAnAffinityLineIsAnError) {
  EXPECT_FALSE(parseCpusAllowedList("Name:\tqemu\nCpus_allowed:\t3\n"));
  EXPECT_FALSE(parseCpusAllowedList("Cpus_allowed_list:\t\n")) << "no CPU at all";
  EXPECT_FALSE(parseCpusAllowedList("Cpus_allowed_list:\t3-1\n"));
  const auto spaced = parseCpusAllowedList("Cpus_allowed_list:  2-3,5\nMems_allowed_list:\t0\n");
  ASSERT_TRUE(spaced);
  EXPECT_EQ(*spaced, (vcpufold::protocol::CpuSet{2, 3, 5}));
  FixtureTree tree("host-qemu-pinned-threads");
  tree.remove("/proc/30855/task/30859/status");
  const auto gone = readThreadAffinities(tree.fs(), 30855, {30858, 30859});
  ASSERT_FALSE(gone);
  EXPECT_NE(gone.error().message.find("30859/status"), std::string::npos) << gone.error().message;
}
