// SPDX-License-Identifier: GPL-2.0-or-later
// hostd deciding per CPU pool on real threads pinned apart. Its own
// executable, run alone (SERIAL): a VM alone on its pCPU is folded, rightly,
// when another test's load lands on that pCPU.

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <thread>
#include <tuple>

#include "child_process.h"
#include "emulated_guest.h"
#include "fixture_tree.h"
#include "unix_socket.h"

using vcpufold::testing::ChildProcess;
using vcpufold::testing::EmulatedGuest;
using vcpufold::testing::FixtureTree;
using vcpufold::testing::freeLoopbackPort;
using vcpufold::testing::httpGet;
using vcpufold::testing::runShell;
using vcpufold::testing::startEmulatedGuest;
using vcpufold::testing::waitUntil;

// Emulated VMs whose threads are pinned (taskset, as vcpupin pins vCPU
// threads): one with a single busy thread alone on pCPU 1, two with four busy
// threads each sharing pCPU 0. hostd reads the threads' affinity, finds two
// pools, folds the pair and leaves the one alone.
TEST(HostdIntegration, PinnedVmsAreDecidedPerPool) {
  FixtureTree work("");
  const std::string dir = work.root().string();
  const std::vector<std::tuple<std::string, std::string, std::string>> vms{
      {"alone", "1", "1"}, {"pair1", "0", "4"}, {"pair2", "0", "4"}};
  std::vector<EmulatedGuest> running;
  std::vector<FixtureTree*> guests;
  for (const auto& [vm, cpu, busy] : vms) {
    running.push_back(startEmulatedGuest(dir, vm, busy, cpu));
    guests.push_back(running.back().tree.get());
  }
  ASSERT_TRUE(waitUntil(
      [&] {
        for (const auto& [vm, cpu, busy] : vms)
          if (!work.fs().exists("/" + vm + ".qmp") || !work.fs().exists("/" + vm + ".hint.sock")) return false;
        return true;
      },
      5000));
  const int port = freeLoopbackPort();
  work.write("/hostd.toml", "[hostd]\ninterval_ms = 300\n[inventory]\nbackend = \"qmp\"\nqmp_directory = \"" + dir +
                                "\"\n[metrics]\naddress = \"127.0.0.1:" + std::to_string(port) +
                                "\"\n[control]\nsocket = \"/run/hostd.sock\"\n");
  // The subject is the decision per pool: hostd sees the VMs' threads, not
  // what else this machine runs (a busy process on pCPU 1 would rightly fold
  // the VM alone there).
  std::vector<const EmulatedGuest*> all;
  for (const auto& guest : running) all.push_back(&guest);
  const std::string root = vcpufold::testing::hostRootWithoutOtherLoad(work.root() / "hostroot", all).string();
  auto hostd = std::make_unique<ChildProcess>(
      VCPUFOLD_HOSTD_BINARY, std::vector<std::string>{"--config", dir + "/hostd.toml", "--root", root},
      dir + "/hostd.log");

  // The pair folds to one vCPU each.
  const auto pairFolded = [&] {
    return guests[1]->read("/sys/fs/cgroup/system.slice/cpuset.cpus") == "0" &&
           guests[2]->read("/sys/fs/cgroup/system.slice/cpuset.cpus") == "0";
  };
  ASSERT_TRUE(waitUntil(pairFolded, 10'000)) << runShell("cat " + dir + "/hostd.log");
  // Three more seconds (10 ticks): the VM alone on pCPU 1 is hinted all its
  // vCPUs throughout, and its guest never folds.
  std::string metrics;
  for (int check = 0; check < 10; ++check) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(guests[0]->read("/sys/fs/cgroup/system.slice/cpuset.cpus"), "\n") << "the VM alone was folded";
    metrics = httpGet(port, "/metrics");
    // The pair is folded, so the VM alone has been decided (and hinted) too:
    // its hint is there to check, every time.
    EXPECT_NE(metrics.find("vcpufold_vm_hint_vcpus{vm=\"alone\"} 4\n"), std::string::npos) << metrics;
  }
  for (const char* line : {"vcpufold_vm_pool_info{vm=\"alone\",pool=\"1\",dedicated=\"false\"} 1",
                           "vcpufold_vm_pool_info{vm=\"pair1\",pool=\"0\",dedicated=\"false\"} 1",
                           "vcpufold_pool_contention{pool=\"0\"} 1", "vcpufold_pool_contention{pool=\"1\"} 0",
                           "vcpufold_vm_hint_vcpus{vm=\"pair2\"} 1"})
    EXPECT_NE(metrics.find(line), std::string::npos) << line << "\n" << metrics;
  const std::string status =
      runShell(std::string(VCPUFOLD_HOSTD_BINARY) + " --config " + dir + "/hostd.toml --root " + root + " status");
  EXPECT_NE(status.find("  pool 0: 1 CPUs, 2 VMs"), std::string::npos) << status;
  EXPECT_NE(status.find("  pool 1: 1 CPUs, 1 VMs"), std::string::npos) << status;
  hostd->signal(SIGTERM);
  EXPECT_EQ(hostd->waitExit(5000), 0);
  const std::string hostdLog = runShell("cat " + dir + "/hostd.log");
  EXPECT_NE(hostdLog.find("pair1: hint 4 -> 1: pool 0: contention"), std::string::npos) << hostdLog;
}
