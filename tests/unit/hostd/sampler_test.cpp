// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "fixture_tree.h"
#include "vcpufold/common/proc_stat.h"
#include "vcpufold/hostd/capacity.h"
#include "vcpufold/hostd/cpu_pool.h"
#include "vcpufold/hostd/vcpu_sample.h"

using namespace vcpufold::hostd;
using vcpufold::protocol::CpuSet;
using vcpufold::testing::fixturesDirectory;
using vcpufold::testing::FixtureTree;

namespace {

std::string readFixture(const std::string& path) {
  std::ifstream in(fixturesDirectory() / "libvirt-tcg-host" / path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// `virsh domstats` prints each domain's typed parameters as "  name=value".
std::map<std::string, std::vector<std::pair<std::string, std::uint64_t>>> parseVirshDomstats(const std::string& text) {
  std::map<std::string, std::vector<std::pair<std::string, std::uint64_t>>> domains;
  std::istringstream lines(text);
  std::string domain;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("Domain: '", 0) == 0) {
      domain = line.substr(9, line.size() - 10);
    } else if (const auto eq = line.find('='); eq != std::string::npos && !domain.empty()) {
      domains[domain].emplace_back(line.substr(2, eq - 2), std::stoull(line.substr(eq + 1)));
    }
  }
  return domains;
}

VmSample sampleOf(const std::string& file, const std::string& domain, std::int64_t atNs) {
  auto counters = vcpuCountersFromStats(parseVirshDomstats(readFixture(file))[domain]);
  EXPECT_TRUE(counters) << counters.error().message;
  return VmSample{counters ? *counters : std::vector<VcpuCounters>{}, atNs, std::nullopt};
}

}  // namespace

TEST(Sampler, LibvirtDomstatsOfTwoContendedGuests) {
  const auto domains = parseVirshDomstats(readFixture("domstats-1.txt"));
  ASSERT_EQ(domains.size(), 2u);
  for (const char* domain : {"fixture-a", "fixture-b"}) {
    const VmSample before = sampleOf("domstats-1.txt", domain, 0);
    const VmSample after = sampleOf("domstats-2.txt", domain, 1'000'000'000);
    ASSERT_EQ(before.vcpus.size(), 4u);
    const auto load = deriveLoad(before, after);
    ASSERT_TRUE(load) << domain;
    // 8 busy vCPUs on 2 pCPUs: each waits about three quarters of the time it wants to run.
    EXPECT_GT(load->delayRatio, 0.6) << domain;
    EXPECT_LT(load->delayRatio, 0.9) << domain;
    // Four vCPUs all want to run (the capture slept a little over the nominal second).
    EXPECT_GT(load->demandCpus, 3.5) << domain;
    EXPECT_LT(load->demandCpus, 5.5) << domain;
    EXPECT_NEAR(load->demandCpus, load->runCpus + load->delayCpus, 1e-9);
  }
}

TEST(Sampler, SchedstatAgreesWithLibvirt) {
  const std::string pid = readFixture("fixture-a.qemu-pid").substr(0, readFixture("fixture-a.qemu-pid").find('\n'));
  const auto libvirt = vcpuCountersFromStats(parseVirshDomstats(readFixture("domstats-2.txt"))["fixture-a"]);
  ASSERT_TRUE(libvirt);
  // vCPU n's thread is the n-th thread-id of query-cpus-fast.
  const std::string cpus = readFixture("fixture-a.query-cpus-fast.json");
  std::vector<std::string> threads;
  for (std::size_t at = 0; (at = cpus.find("\"thread-id\":", at)) != std::string::npos;) {
    at += 12;
    const std::string tid = cpus.substr(at, cpus.find_first_of(",}", at) - at);
    if (tid != "0") threads.push_back(tid);  // props.thread-id is the SMT index, not a TID
  }
  ASSERT_EQ(threads.size(), 4u);
  for (std::size_t n = 0; n < 4; ++n) {
    auto schedstat = parseSchedstat(readFixture("proc/" + pid + "/task/" + threads[n] + "/schedstat.2"));
    ASSERT_TRUE(schedstat) << schedstat.error().message;
    // The capture read schedstat a few milliseconds after virsh: the counters
    // agree to within that (vcpu.0 to the nanosecond).
    EXPECT_GE(schedstat->delayNs, (*libvirt)[n].delayNs) << "vcpu." << n << ".delay is schedstat's wait";
    EXPECT_NEAR(static_cast<double>(schedstat->delayNs), static_cast<double>((*libvirt)[n].delayNs), 50e6);
    // vcpu.<n>.time is the thread's run time at tick (10 ms) resolution.
    EXPECT_NEAR(static_cast<double>(schedstat->runNs), static_cast<double>((*libvirt)[n].runNs), 50e6);
  }
}

TEST(Sampler, CounterResetsAndHotplugCauseNoSpike) {
  const VmSample a{{{1000, 500}, {1000, 500}}, 0, std::nullopt};
  const VmSample restarted{{{10, 5}, {10, 5}}, 1'000'000'000, std::nullopt};
  EXPECT_FALSE(deriveLoad(a, restarted)) << "counters went backwards: VM restarted";
  // A hot-plugged vCPU (new counters from 0) counts from the next sample on;
  // the two vCPUs both samples have give this one's load.
  const VmSample hotplugged{{{500'001'000, 500}, {1000, 250'000'500}, {7'000'000'000, 0}}, 1'000'000'000, std::nullopt};
  const auto plugged = deriveLoad(a, hotplugged);
  ASSERT_TRUE(plugged) << "a vCPU count change costs no sample";
  EXPECT_NEAR(plugged->runCpus, 0.5, 1e-9) << "the new vCPU's counter is not a spike";
  EXPECT_NEAR(plugged->delayCpus, 0.25, 1e-9);
  const VmSample unplugged{{{500'001'000, 500}}, 1'000'000'000, std::nullopt};
  ASSERT_TRUE(deriveLoad(a, unplugged));
  EXPECT_NEAR(deriveLoad(a, unplugged)->runCpus, 0.5, 1e-9);
  EXPECT_FALSE(deriveLoad(a, VmSample{a.vcpus, 0, std::nullopt})) << "no time passed";
  const VmSample next{{{501000, 250500}, {1000, 500}}, 1'000'000'000, std::nullopt};
  const auto load = deriveLoad(a, VmSample{next.vcpus, 1'000'000, std::nullopt});
  ASSERT_TRUE(load);
  EXPECT_NEAR(load->runCpus, 0.5, 1e-9);
  EXPECT_NEAR(load->delayCpus, 0.25, 1e-9);
}

TEST(Sampler, TheVmsOtherThreadsAreItsOwnLoad) {
  // 2 vCPUs ran 0.5 CPU in all; the QEMU process (every thread) ran 0.8:
  // 0.3 CPU of emulator and I/O threads, this VM's own.
  const VmSample a{{{0, 0}, {0, 0}}, 0, 1'000'000};
  const VmSample b{{{250'000'000, 0}, {250'000'000, 0}}, 1'000'000'000, 801'000'000};
  const auto load = deriveLoad(a, b);
  ASSERT_TRUE(load);
  EXPECT_NEAR(load->runCpus, 0.5, 1e-9);
  EXPECT_NEAR(load->otherRunCpus, 0.3, 1e-9);
  // Without the process's time, or when it lags the vCPUs' (clock-tick
  // resolution), nothing is made up.
  EXPECT_DOUBLE_EQ(deriveLoad(a, VmSample{b.vcpus, b.monotonicNs, std::nullopt})->otherRunCpus, 0.0);
  EXPECT_DOUBLE_EQ(deriveLoad(a, VmSample{b.vcpus, b.monotonicNs, 400'000'000})->otherRunCpus, 0.0);
}

TEST(Sampler, MalformedStats) {
  EXPECT_FALSE(vcpuCountersFromStats({{"vcpu.current", 2}, {"vcpu.0.time", 1}, {"vcpu.0.delay", 1}}));
  EXPECT_FALSE(vcpuCountersFromStats({{"vcpu.maximum", 2}}));
  EXPECT_FALSE(vcpuCountersFromStats({{"vcpu.current", 100000}}));
  EXPECT_FALSE(parseSchedstat("abc"));
  EXPECT_FALSE(parseSchedstat("12"));
  EXPECT_TRUE(parseSchedstat("12 34 5\n"));
}

TEST(CpuPool, CgroupV1MachineCpuset) {
  FixtureTree tree("libvirt-tcg-host");
  auto pool = readVmCpuPool(tree.fs());
  ASSERT_TRUE(pool) << pool.error().message;
  EXPECT_EQ(pool->cpus, (CpuSet{0, 1}));
  EXPECT_EQ(pool->source, "/sys/fs/cgroup/cpuset/machine/cpuset.effective_cpus");
}

TEST(CpuPool, CgroupV2MachineSlice) {
  FixtureTree tree("host-cgroup2-machine-slice");
  auto pool = readVmCpuPool(tree.fs());
  ASSERT_TRUE(pool) << pool.error().message;
  EXPECT_EQ(pool->cpus, (CpuSet{1, 2, 3}));
  EXPECT_EQ(pool->source, "/sys/fs/cgroup/machine.slice/cpuset.cpus.effective");
}

TEST(CpuPool, OnlineCpusWithoutAMachineCgroup) {
  FixtureTree tree("lab-guest-4vcpu");
  auto pool = readVmCpuPool(tree.fs());
  ASSERT_TRUE(pool);
  EXPECT_EQ(pool->cpus, CpuSet::range(0, 3));
  EXPECT_EQ(pool->source, "/sys/devices/system/cpu/online");
}

TEST(CpuPool, NamedCgroupV1AndV2) {
  FixtureTree v1("libvirt-tcg-host");
  auto pool = readVmCpuPool(v1.fs(), "machine");
  ASSERT_TRUE(pool) << pool.error().message;
  EXPECT_EQ(pool->source, "/sys/fs/cgroup/cpuset/machine/cpuset.effective_cpus");
  FixtureTree v2("host-cgroup2-machine-slice");
  pool = readVmCpuPool(v2.fs(), "machine.slice");
  ASSERT_TRUE(pool) << pool.error().message;
  EXPECT_EQ(pool->cpus, (CpuSet{1, 2, 3}));
}

TEST(CpuPool, NamedCgroupThatIsNotThereIsAnErrorNotTheOnlineCpus) {
  FixtureTree tree("lab-guest-4vcpu");
  auto pool = readVmCpuPool(tree.fs(), "qemu.slice");
  ASSERT_FALSE(pool);
  EXPECT_NE(pool.error().message.find("inventory.pool_cgroup \"qemu.slice\""), std::string::npos)
      << pool.error().message;
}

TEST(CpuPool, HostBusyAndCapacity) {
  auto before = vcpufold::parseProcStat(readFixture("proc-stat.1"));
  auto after = vcpufold::parseProcStat(readFixture("proc-stat.2"));
  ASSERT_TRUE(before && after);
  ASSERT_EQ(before->perCpu.size(), 2u);
  // Eight burning vCPUs keep both pCPUs busy.
  const double busy = busyCpus(before->perCpu, after->perCpu, CpuSet{0, 1});
  EXPECT_GT(busy, 1.8);
  EXPECT_LE(busy, 2.0 + 1e-9);
  EXPECT_NEAR(busyCpus(before->perCpu, after->perCpu, CpuSet{0}), busy / 2, 0.2);
  EXPECT_EQ(busyCpus(before->perCpu, after->perCpu, CpuSet{5}), 0.0) << "a CPU with no line adds nothing";
  const auto perCpu = busyPerCpu(before->perCpu, after->perCpu, CpuSet{0, 1, 5});
  ASSERT_EQ(perCpu.size(), 2u) << "only CPUs with a line in both readings";
  EXPECT_NEAR(perCpu.at(0) + perCpu.at(1), busy, 1e-9);
}
