// SPDX-License-Identifier: GPL-2.0-or-later
// Pools of pCPUs as VMs may use them (cpu_pools.h), and the decisions taken
// per pool (decideTick): pinned VMs, dedicated VMs, isolated pCPUs, NUMA
// nodes, non-VM load charged where it runs.

#include "vcpufold/hostd/cpu_pools.h"

#include <gtest/gtest.h>

#include "vcpufold/hostd/tick.h"

using namespace vcpufold::hostd;
using vcpufold::protocol::CpuSet;

namespace {

VcpuPlacement pinned(std::vector<CpuSet> vcpus) { return placementOf(vcpus, "test"); }

std::vector<std::string> poolNames(const PoolLayout& layout) {
  std::vector<std::string> names;
  for (const CpuPool& pool : layout.pools) names.push_back(pool.name);
  return names;
}

}  // namespace

TEST(VcpuPlacement, OneToOneMeansEachVcpuOnADifferentSinglePcpu) {
  EXPECT_TRUE(pinned({{5}, {6}}).pinnedOneToOne);
  EXPECT_FALSE(pinned({{5}, {5}}).pinnedOneToOne) << "two vCPUs on one pCPU";
  EXPECT_FALSE(pinned({{5, 6}, {6}}).pinnedOneToOne);
  EXPECT_FALSE(pinned({}).pinnedOneToOne);
  EXPECT_EQ(pinned({{5}, {2, 3}}).cpus, (CpuSet{2, 3, 5}));
}

TEST(PoolLayout, NoPlacementKnownIsOnePoolAsAlways) {
  const PoolLayout layout = layoutPools(CpuSet::range(0, 3), {}, {VcpuPlacement{}, VcpuPlacement{}});
  EXPECT_EQ(poolNames(layout), std::vector<std::string>{"0-3"});
  EXPECT_EQ(layout.places.size(), 1u);
  EXPECT_EQ(layout.pools[0].vms, (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(layout.dedicated, (std::vector<bool>{false, false}));
  EXPECT_EQ(poolNames(layoutPools(CpuSet::range(0, 3), {}, std::vector<VcpuPlacement>{})),
            std::vector<std::string>{"0-3"})
      << "no VMs: the pool they would have";
}

TEST(PoolLayout, AnOpenStackLikeHost) {
  // CPU 0 for the host (outside machine.slice), 1-4 Nova's cpu_shared_set,
  // 5 and 6 two dedicated guests, 7 isolated (isolcpus) and unused.
  const CpuSet machine = CpuSet::range(1, 7);
  const CpuSet shared = CpuSet::range(1, 4);
  const PoolLayout layout =
      layoutPools(machine, CpuSet{7},
                  {pinned({shared, shared, shared, shared}), pinned({shared, shared}), pinned({{5}}), pinned({{6}})});
  EXPECT_EQ(poolNames(layout), (std::vector<std::string>{"1-4", "5", "6"}));
  EXPECT_EQ(layout.poolOfVm, (std::vector<std::size_t>{0, 0, 1, 2}));
  EXPECT_EQ(layout.dedicated, (std::vector<bool>{false, false, true, true}));
  // An unpinned VM on this host may run anywhere but the isolated CPU.
  const PoolLayout withUnpinned = layoutPools(machine, CpuSet{7}, {VcpuPlacement{}, pinned({{5}})});
  EXPECT_EQ(poolNames(withUnpinned), std::vector<std::string>{"1-6"});
  EXPECT_FALSE(withUnpinned.dedicated[1]) << "its pCPU is shared with the unpinned VM";
}

TEST(PoolLayout, OverlappingSetsAreOnePoolOfSeveralPlaces) {
  const PoolLayout layout = layoutPools(CpuSet::range(0, 3), {}, {pinned({{0, 1}}), pinned({{1, 2}})});
  EXPECT_EQ(poolNames(layout), std::vector<std::string>{"0-2"}) << "CPU 3 is no VM's: in no pool";
  ASSERT_EQ(layout.places.size(), 3u);
  EXPECT_EQ(layout.places[0], CpuSet{0});
  EXPECT_EQ(layout.places[1], CpuSet{1});
  EXPECT_EQ(layout.places[2], CpuSet{2});
  EXPECT_EQ(layout.placesOfVm[0], (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(layout.placesOfVm[1], (std::vector<std::size_t>{1, 2}));
}

TEST(PoolLayout, IsolatedPcpusCountOnlyForAVmPinnedToThemAlone) {
  const PoolLayout layout =
      layoutPools(CpuSet::range(0, 3), CpuSet{2, 3}, {pinned({{0, 1, 2}}), pinned({{3}, {2}}), VcpuPlacement{}});
  // The first VM's isolated CPU 2 is dropped; the second is pinned to isolated CPUs alone.
  EXPECT_EQ(poolNames(layout), (std::vector<std::string>{"0-1", "2-3"}));
  EXPECT_TRUE(layout.dedicated[1]);
  EXPECT_EQ(layout.poolOfVm[2], 0u) << "an unpinned VM runs on the housekeeping CPUs";
}

TEST(PoolCapacities, NonVmLoadIsChargedToThePoolItRunsOn) {
  // Two pools of 2 pCPUs; something else burns CPU 3 (pool 2-3).
  const PoolLayout layout = layoutPools(CpuSet::range(0, 3), {}, {pinned({{0, 1}}), pinned({{2, 3}})});
  PoolLoad load;
  load.cpuBusy = {{0, 1.0}, {1, 1.0}, {2, 0.5}, {3, 1.0}};
  load.vmRunCpus = {2.0, 0.5};
  const auto capacities = poolCapacities(layout, load);
  ASSERT_EQ(capacities.size(), 2u);
  EXPECT_NEAR(capacities[0].nonVmCpus, 0.0, 1e-9);
  EXPECT_NEAR(capacities[0].capacity, 2.0, 1e-9);
  EXPECT_NEAR(capacities[1].measuredNonVmCpus, 1.0, 1e-9);
  EXPECT_NEAR(capacities[1].capacity, 1.0, 1e-9);
  // A load seen once counts only as far as the last tick saw it too.
  load.previousNonVmCpus = {{"2-3", 0.25}};
  EXPECT_NEAR(poolCapacities(layout, load)[1].capacity, 1.75, 1e-9);
  // The reserve is spread by size: 1 CPU over two pools of 2.
  load.reserveCpus = 1.0;
  EXPECT_NEAR(poolCapacities(layout, load)[0].capacity, 1.5, 1e-9);
}

TEST(PoolCapacities, InsideAPoolTheLoadGoesWhereTheBusyTimeIsNotTheVms) {
  // One VM may use CPUs 0-1 and runs 1 CPU; CPU 1 also has 1 CPU of other load.
  const PoolLayout layout = layoutPools(CpuSet::range(0, 1), {}, {pinned({{0}}), pinned({{0, 1}})});
  PoolLoad load;
  load.cpuBusy = {{0, 1.0}, {1, 1.0}};
  load.vmRunCpus = {1.0, 0.0};
  const auto capacities = poolCapacities(layout, load);
  ASSERT_EQ(capacities.size(), 1u);
  ASSERT_EQ(capacities[0].placeCapacity.size(), 2u);
  EXPECT_NEAR(capacities[0].placeCapacity[0], 1.0, 1e-9);
  EXPECT_NEAR(capacities[0].placeCapacity[1], 0.0, 1e-9);
}

namespace {

// Cooperative VMs with every vCPU wanting `want` of a 1 s tick and running `run` of it.
void addVm(TickInputs& inputs, const std::string& name, std::uint32_t vcpus, double want, double run,
           VcpuPlacement placement) {
  VmRecord vm;
  vm.name = name;
  vm.vcpus = vcpus;
  vm.placement = std::move(placement);
  inputs.vms.push_back(vm);
  VmSample before, after;
  after.monotonicNs = 1'000'000'000;
  before.vcpus.assign(vcpus, VcpuCounters{});
  after.vcpus.assign(
      vcpus, VcpuCounters{static_cast<std::uint64_t>(run * 1e9), static_cast<std::uint64_t>((want - run) * 1e9)});
  inputs.previousSamples[name] = before;
  inputs.samples[name] = after;
  ChannelSnapshot channel;
  channel.cooperative = true;
  inputs.channels[name] = channel;
}

const VmReport& row(const TickReport& report, const std::string& name) {
  for (const VmReport& vm : report.vms)
    if (vm.record.name == name) return vm;
  throw std::runtime_error("no row " + name);
}

}  // namespace

TEST(DecideTickPools, AVmAloneOnItsPcpuIsNotFoldedWhileTwoSharingTheOtherAre) {
  TickInputs inputs;
  inputs.poolCpuSet = CpuSet{0, 1};
  inputs.poolCpus = 2;
  // alone: 4 vCPUs on pCPU 1, one busy thread. busy1, busy2: 4 busy vCPUs each on pCPU 0.
  addVm(inputs, "alone", 4, 0.25, 0.25, pinned({{1}, {1}, {1}, {1}}));
  addVm(inputs, "busy1", 4, 1.0, 0.125, pinned({{0}, {0}, {0}, {0}}));
  addVm(inputs, "busy2", 4, 1.0, 0.125, pinned({{0}, {0}, {0}, {0}}));
  inputs.cpuBusy = {{0, 1.0}, {1, 1.0}};
  inputs.hostBusyCpus = 2.0;
  const TickReport report = decideTick({}, inputs, {}, 2);
  ASSERT_EQ(report.pools.size(), 2u);
  EXPECT_EQ(row(report, "alone").pool, "1");
  EXPECT_EQ(row(report, "alone").allocation.hint, 4u) << row(report, "alone").allocation.reason;
  EXPECT_NE(row(report, "alone").allocation.reason.find("pool 1: no contention"), std::string::npos);
  for (const char* vm : {"busy1", "busy2"}) {
    EXPECT_EQ(row(report, vm).allocation.hint, 1u) << row(report, vm).allocation.reason;
    EXPECT_NE(row(report, vm).allocation.reason.find("pool 0: contention"), std::string::npos);
  }
  EXPECT_TRUE(report.contention);
  EXPECT_TRUE(report.pools[0].contention);
  EXPECT_FALSE(report.pools[1].contention);
}

TEST(DecideTickPools, ADedicatedVmIsNeverFoldedEvenUnderNonVmLoad) {
  TickInputs inputs;
  inputs.poolCpuSet = CpuSet::range(0, 3);
  inputs.poolCpus = 4;
  addVm(inputs, "dedicated", 2, 1.0, 0.5, pinned({{2}, {3}}));
  addVm(inputs, "shared", 4, 1.0, 0.5, pinned({{0, 1}, {0, 1}, {0, 1}, {0, 1}}));
  // Something else burns half of CPUs 2 and 3, this tick and the last.
  inputs.cpuBusy = {{0, 1.0}, {1, 1.0}, {2, 1.0}, {3, 1.0}};
  inputs.hostBusyCpus = 4.0;
  inputs.previousNonVmCpus = {{"2-3", 1.0}};
  const TickReport report = decideTick({}, inputs, {}, 2);
  const VmReport& dedicated = row(report, "dedicated");
  EXPECT_TRUE(dedicated.allocation.dedicated);
  EXPECT_EQ(dedicated.allocation.hint, 2u) << dedicated.allocation.reason;
  EXPECT_NE(dedicated.allocation.reason.find("dedicated"), std::string::npos);
  EXPECT_EQ(row(report, "shared").allocation.hint, 2u) << row(report, "shared").allocation.reason;
  ASSERT_EQ(report.pools.size(), 2u);
  EXPECT_EQ(report.pools[1].dedicatedVms, 1u);
}

TEST(DecideTickPools, ABusyNumaNodeDoesNotFoldTheVmsOfAnIdleOne) {
  // Two host nodes, CPUs 0-1 and 2-3; each VM confined to one by numatune/cpuset.
  TickInputs inputs;
  inputs.poolCpuSet = CpuSet::range(0, 3);
  inputs.poolCpus = 4;
  const CpuSet node0{0, 1}, node1{2, 3};
  addVm(inputs, "n0-a", 4, 1.0, 0.25, pinned({node0, node0, node0, node0}));
  addVm(inputs, "n0-b", 4, 1.0, 0.25, pinned({node0, node0, node0, node0}));
  addVm(inputs, "n1-a", 2, 0.5, 0.5, pinned({node1, node1}));
  inputs.cpuBusy = {{0, 1.0}, {1, 1.0}, {2, 0.5}, {3, 0.5}};
  inputs.hostBusyCpus = 3.0;
  const TickReport report = decideTick({}, inputs, {}, 2);
  EXPECT_EQ(row(report, "n1-a").allocation.hint, 2u) << row(report, "n1-a").allocation.reason;
  EXPECT_EQ(row(report, "n0-a").allocation.hint, 1u) << row(report, "n0-a").allocation.reason;
  // One pool for the whole host would have folded n1-a: demand 9 on 4 CPUs.
  TickInputs unplaced = inputs;
  for (VmRecord& vm : unplaced.vms) vm.placement = {};
  EXPECT_LT(*row(decideTick({}, unplaced, {}, 2), "n1-a").allocation.hint, 2u);
}

TEST(DecideTickPools, AVmAloneInItsPoolFoldsOnlyForMoreThanTheHostsNoise) {
  TickInputs inputs;
  inputs.poolCpuSet = CpuSet{0, 1};
  inputs.poolCpus = 2;
  // One busy thread on pCPU 1, which the host's own tasks take 5% of.
  addVm(inputs, "alone", 4, 0.25, 0.2375, pinned({{1}, {1}, {1}, {1}}));
  addVm(inputs, "other", 2, 0.5, 0.5, pinned({{0}, {0}}));
  inputs.cpuBusy = {{0, 1.0}, {1, 1.0}};
  inputs.hostBusyCpus = 2.0;
  const TickReport report = decideTick({}, inputs, {}, 2);
  EXPECT_NEAR(report.pools[1].capacity, 0.95, 1e-9);
  EXPECT_FALSE(report.pools[1].contention);
  EXPECT_EQ(row(report, "alone").allocation.hint, 4u) << row(report, "alone").allocation.reason;
  // Four busy threads on its one pCPU: it is its own overcommit, and folds.
  TickInputs overcommitted = inputs;
  addVm(overcommitted, "self", 4, 1.0, 0.25, pinned({{0}, {0}, {0}, {0}}));
  overcommitted.vms.erase(overcommitted.vms.begin() + 1);  // "other" leaves pCPU 0 to it
  const TickReport folded = decideTick({}, overcommitted, {}, 2);
  EXPECT_EQ(row(folded, "self").allocation.hint, 1u) << row(folded, "self").allocation.reason;
}

TEST(DecideTickPools, AVmWithoutASampleHoldsOnlyItsOwnPool) {
  // busy1 and busy2 share pCPU 0; "mute" (its monitor failed: no sample) and
  // "quiet" share pCPU 1. Before, one missing sample held every VM and after
  // the hold withdrew every hint.
  TickInputs inputs;
  inputs.poolCpuSet = CpuSet{0, 1};
  inputs.poolCpus = 2;
  inputs.now = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  addVm(inputs, "busy1", 4, 1.0, 0.125, pinned({{0}, {0}, {0}, {0}}));
  addVm(inputs, "busy2", 4, 1.0, 0.125, pinned({{0}, {0}, {0}, {0}}));
  addVm(inputs, "mute", 2, 0.5, 0.5, pinned({{1}, {1}}));
  addVm(inputs, "quiet", 2, 0.0, 0.0, pinned({{1}, {1}}));
  inputs.samples.erase("mute");
  inputs.cpuBusy = {{0, 1.0}, {1, 1.0}};
  inputs.hostBusyCpus = 2.0;
  HintStates state;
  for (const char* vm : {"busy1", "busy2"}) state[vm].hint = 4;
  for (const char* vm : {"mute", "quiet"}) state[vm].hint = 2;

  TickReport report = decideTick({}, inputs, state, 2);
  EXPECT_FALSE(report.inputsMissingHostWide);
  ASSERT_TRUE(report.inputsMissing.has_value());
  EXPECT_NE(report.inputsMissing->find("no vCPU sample of mute (pool 1 held)"), std::string::npos)
      << *report.inputsMissing;
  for (const char* vm : {"busy1", "busy2"}) {
    EXPECT_EQ(row(report, vm).allocation.hint, 1u) << "pool 0 decides: " << row(report, vm).allocation.reason;
    EXPECT_FALSE(row(report, vm).inputsMissing);
  }
  for (const char* vm : {"mute", "quiet"}) {
    EXPECT_EQ(row(report, vm).allocation.hint, 2u) << row(report, vm).allocation.reason;
    EXPECT_TRUE(row(report, vm).inputsMissing);
    ASSERT_TRUE(row(report, vm).hint.has_value());
    EXPECT_EQ(row(report, vm).hint->reason.find("mute"), std::string::npos) << "no VM's name in a guest's reason";
  }
  EXPECT_FALSE(report.pools[0].inputsMissing);
  EXPECT_TRUE(report.pools[1].inputsMissing);
  EXPECT_FALSE(report.pools[1].hintsWithdrawn);
  EXPECT_EQ(report.hintState.at("busy1").hint, 1u);
  EXPECT_EQ(report.hintState.at("quiet").hint, 2u);

  // Past the hold, pool 1's hints stop; pool 0 goes on deciding.
  inputs.poolInputsMissingSince["1"] = inputs.now - inputs.missingInputHold - std::chrono::milliseconds(1);
  report = decideTick({}, inputs, report.hintState, 3);
  EXPECT_FALSE(report.hintsWithdrawn) << "not every hint";
  EXPECT_TRUE(report.pools[1].hintsWithdrawn);
  for (const char* vm : {"mute", "quiet"}) {
    EXPECT_FALSE(row(report, vm).allocation.hint.has_value());
    EXPECT_FALSE(row(report, vm).hint.has_value()) << "nothing is sent";
    EXPECT_FALSE(report.hintState.count(vm));
  }
  for (const char* vm : {"busy1", "busy2"}) EXPECT_EQ(row(report, vm).allocation.hint, 1u);

  // Without pinning there is one pool: the missing sample holds every VM.
  TickInputs unplaced = inputs;
  for (VmRecord& vm : unplaced.vms) vm.placement = {};
  unplaced.poolInputsMissingSince.clear();
  const TickReport whole = decideTick({}, unplaced, state, 2);
  for (const char* vm : {"busy1", "busy2"}) EXPECT_EQ(row(whole, vm).allocation.hint, 4u) << "held";
}
