// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/common/proc_stat.h"

#include <gtest/gtest.h>

#include "fixture_tree.h"

using vcpufold::parseProcStat;
using vcpufold::testing::FixtureTree;

namespace {

constexpr const char* kLine = "cpu  9 9 9 9 9 9 9 9\n";

}  // namespace

TEST(ProcStat, HostAndGuestFixturesGiveTheSameShape) {
  // A host with libvirt's machine slice and a guest with offline CPUs, both
  // copied from real /proc/stat.
  FixtureTree host("host-cgroup2-machine-slice");
  auto hostStat = parseProcStat(host.read("/proc/stat"));
  ASSERT_TRUE(hostStat) << hostStat.error().message;
  EXPECT_FALSE(hostStat->perCpu.empty());
  std::uint64_t busy = 0, total = 0;
  for (const auto& [cpu, ticks] : hostStat->perCpu) {
    EXPECT_LE(ticks.busy, ticks.total) << "cpu" << cpu;
    busy += ticks.busy;
    total += ticks.total;
  }
  // The aggregate line is the sum of the per-CPU lines, read apart: a few
  // ticks pass between the kernel's walks.
  EXPECT_NEAR(static_cast<double>(hostStat->all.total), static_cast<double>(total), 0.01 * static_cast<double>(total));
  EXPECT_NEAR(static_cast<double>(hostStat->all.busy), static_cast<double>(busy),
              0.01 * static_cast<double>(total) + 1);
  EXPECT_GE(hostStat->procsRunning, 1u) << "the reader itself";

  FixtureTree guest("guest-offline-cpus");
  auto guestStat = parseProcStat(guest.read("/proc/stat"));
  ASSERT_TRUE(guestStat);
  EXPECT_EQ(guestStat->perCpu.size(), 3u) << "possible 0-7, online 0-1,3: offline CPUs have no line";
  EXPECT_EQ(guestStat->perCpu.count(2), 0u);
  EXPECT_EQ(guestStat->perCpu.count(3), 1u);
}

TEST(ProcStat, BusyTotalAndStealOfALine) {
  const auto stat = parseProcStat(std::string(kLine) + "cpu1  10 0 5 80 5 0 0 7 3 0\nprocs_running 4\n");
  ASSERT_TRUE(stat) << stat.error().message;
  const auto& ticks = stat->perCpu.at(1);
  EXPECT_EQ(ticks.total, 107u) << "guest time (9th field) is inside user already";
  EXPECT_EQ(ticks.busy, 22u) << "all but idle (80) and iowait (5)";
  EXPECT_EQ(ticks.steal, 7u);
  EXPECT_EQ(stat->all.steal, 9u);
  EXPECT_EQ(stat->procsRunning, 4u);
}

TEST(ProcStat, MalformedIsAnError) {
  const std::string tail = "cpu0 1 2 3 4 5 6 7 8\nprocs_running 1\n";
  EXPECT_TRUE(parseProcStat(kLine + tail));
  EXPECT_FALSE(parseProcStat(""));
  EXPECT_FALSE(parseProcStat("cpu  1 2 3\n" + tail)) << "short cpu line";
  EXPECT_FALSE(parseProcStat(std::string(kLine) + "cpu0 1 2 3 4 5 6 7 8\n")) << "no procs_running";
  EXPECT_FALSE(parseProcStat(std::string(kLine) + "procs_running 1\n")) << "no per-CPU line";
  EXPECT_FALSE(parseProcStat("cpu  1 2 3 4 5 6 7 x\n" + tail));
  EXPECT_FALSE(parseProcStat(std::string(kLine) + "cpu0 1\nprocs_running 1\n"));
  EXPECT_FALSE(parseProcStat(kLine + std::string("cpu0 1 2 3 4 5 6 7 8\nprocs_running x\n")));
}

TEST(ProcStat, SignsGarbageAndOverflowAreRefused) {
  const auto with = [](const std::string& cpuLine) {
    return parseProcStat(std::string(kLine) + cpuLine + "\nprocs_running 1\n");
  };
  // Found by fuzzing: istream read "-964" into an unsigned as a huge number.
  EXPECT_FALSE(with("cpu0 100 0 50 -964 0 0 0 0"));
  EXPECT_FALSE(with("cpu0 100 0 50 20x 0 0 0 0"));
  EXPECT_FALSE(with("cpu0 18446744073709551615 1 0 0 0 0 0 0")) << "the sum overflows";
  EXPECT_FALSE(with("cpu99999 1 1 1 1 1 1 1 1")) << "beyond any kernel's CPUs";
  EXPECT_FALSE(with("cpux 1 1 1 1 1 1 1 1"));
}
