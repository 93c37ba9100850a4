// SPDX-License-Identifier: GPL-2.0-or-later
// decideTick: how the host's non-VM load enters the VMs' capacity.

#include "vcpufold/hostd/tick.h"

#include <gtest/gtest.h>

namespace vcpufold::hostd {
namespace {

// Two cooperative 4-vCPU VMs, every vCPU wanting to run all of a 1 s tick and
// running `runShare` of it, on a pool of `pool` CPUs.
TickInputs contendedPool(double pool, double runShare) {
  TickInputs inputs;
  inputs.poolCpus = pool;
  for (const char* name : {"vm1", "vm2"}) {
    VmRecord vm;
    vm.name = name;
    vm.vcpus = 4;
    inputs.vms.push_back(vm);
    VmSample before, after;
    after.monotonicNs = 1'000'000'000;
    const auto run = static_cast<std::uint64_t>(runShare * 1e9);
    before.vcpus.assign(4, VcpuCounters{});
    after.vcpus.assign(4, VcpuCounters{run, 1'000'000'000 - run});
    inputs.previousSamples[name] = before;
    inputs.samples[name] = after;
    ChannelSnapshot channel;
    channel.cooperative = true;
    inputs.channels[name] = channel;
  }
  return inputs;
}

TEST(DecideTick, AOneTickSpikeOfNonVmLoadLeavesTheCapacity) {
  TickInputs inputs = contendedPool(4, 0.25);  // the VMs run 2 CPUs
  inputs.hostBusyCpus = 4.0;                   // 2 CPUs of something else, this tick only
  inputs.previousNonVmCpus = {{"0-3", 0.0}};   // a pool is named by its CPUs
  std::map<std::string, HintState> state;
  const TickReport report = decideTick({}, inputs, state, 2);
  EXPECT_DOUBLE_EQ(report.measuredNonVmCpus, 2.0);
  EXPECT_DOUBLE_EQ(report.nonVmCpus, 0.0);
  EXPECT_DOUBLE_EQ(report.capacity, 4.0);
  for (const auto& vm : report.vms) EXPECT_EQ(vm.allocation.hint, 2u) << vm.record.name;
}

TEST(DecideTick, NonVmLoadThatLastsTwoTicksShrinksTheCapacity) {
  TickInputs inputs = contendedPool(4, 0.25);
  inputs.hostBusyCpus = 4.0;
  inputs.previousNonVmCpus = {{"0-3", 2.0}};  // it was there last tick too
  std::map<std::string, HintState> state;
  const TickReport report = decideTick({}, inputs, state, 3);
  EXPECT_DOUBLE_EQ(report.nonVmCpus, 2.0);
  EXPECT_DOUBLE_EQ(report.capacity, 2.0);
  for (const auto& vm : report.vms) EXPECT_EQ(vm.allocation.hint, 1u) << vm.record.name;
}

TEST(DecideTick, CountsTheSmallerOfTwoTicksNonVmLoad) {
  TickInputs inputs = contendedPool(4, 0.25);
  inputs.hostBusyCpus = 3.0;                  // 1 CPU of other load now
  inputs.previousNonVmCpus = {{"0-3", 1.5}};  // 1.5 last tick
  std::map<std::string, HintState> state;
  const TickReport report = decideTick({}, inputs, state, 3);
  EXPECT_DOUBLE_EQ(report.measuredNonVmCpus, 1.0);
  EXPECT_DOUBLE_EQ(report.nonVmCpus, 1.0);
  EXPECT_DOUBLE_EQ(report.capacity, 3.0);
}

TEST(DecideTick, WithoutALastTickTheLoadCountsAsMeasured) {
  TickInputs inputs = contendedPool(4, 0.25);
  inputs.hostBusyCpus = 4.0;
  std::map<std::string, HintState> state;
  const TickReport report = decideTick({}, inputs, state, 1);
  EXPECT_DOUBLE_EQ(report.nonVmCpus, 2.0);
  EXPECT_DOUBLE_EQ(report.capacity, 2.0);
}

}  // namespace
}  // namespace vcpufold::hostd

namespace vcpufold::hostd {
namespace {

using Clock = std::chrono::steady_clock;
const Clock::time_point kNow = Clock::time_point{} + std::chrono::hours(10);

// Two idle 4-vCPU VMs on 4 CPUs, each already hinted 4 (as on a quiet host).
TickInputs quietHost() {
  TickInputs inputs = contendedPool(4, 0.0);
  for (auto& [name, sample] : inputs.samples) sample.vcpus.assign(4, VcpuCounters{});
  inputs.hostBusyCpus = 0.0;
  inputs.previousNonVmCpus = {{"0-3", 0.0}};  // a pool is named by its CPUs
  inputs.now = kNow;
  return inputs;
}

std::map<std::string, HintState> hinted(std::uint32_t vcpus) {
  return {{"vm1", HintState{vcpus, 0, std::nullopt}}, {"vm2", HintState{vcpus, 0, std::nullopt}}};
}

TEST(DecideTickMissingInputs, AnUnreadablePoolHoldsTheHintsInsteadOfFolding) {
  TickInputs inputs = quietHost();
  inputs.poolCpus = 0;  // the pool's CPU list could not be read
  inputs.missingInputs.push_back("VM CPU pool: cannot read");
  auto state = hinted(4);
  const TickReport report = decideTick({}, inputs, state, 5);
  ASSERT_TRUE(report.inputsMissing.has_value());
  EXPECT_NE(report.inputsMissing->find("VM CPU pool"), std::string::npos);
  EXPECT_FALSE(report.hintsWithdrawn);
  for (const auto& vm : report.vms) {
    EXPECT_EQ(vm.allocation.hint, 4u) << vm.allocation.reason;
    EXPECT_NE(vm.allocation.reason.find("holding 4"), std::string::npos) << vm.allocation.reason;
  }
  EXPECT_EQ(state, hinted(4));
}

TEST(DecideTickMissingInputs, VmsWithoutSamplesHoldRatherThanCountAsNonVmLoad) {
  // libvirtd is restarting: no samples, while the host's CPU time shows the
  // VMs' run time as busy. Today's law would read that as non-VM load and fold.
  TickInputs inputs = contendedPool(4, 1.0);
  inputs.samples.clear();
  inputs.hostBusyCpus = 4.0;
  inputs.previousNonVmCpus = {{"0-3", 4.0}};
  inputs.now = kNow;
  auto state = hinted(4);
  const TickReport report = decideTick({}, inputs, state, 5);
  ASSERT_TRUE(report.inputsMissing.has_value());
  EXPECT_NE(report.inputsMissing->find("no vCPU sample of vm1"), std::string::npos);
  for (const auto& vm : report.vms) EXPECT_EQ(vm.allocation.hint, 4u) << vm.allocation.reason;
}

TEST(DecideTickMissingInputs, AfterTheHoldEveryHintIsWithdrawnNeverShrunk) {
  TickInputs inputs = quietHost();
  inputs.missingInputs.push_back("inventory: libvirt not connected");
  inputs.missingInputHold = std::chrono::milliseconds(3000);
  inputs.inputsMissingSince = kNow - std::chrono::milliseconds(2999);
  auto state = hinted(3);
  TickReport report = decideTick({}, inputs, state, 5);
  for (const auto& vm : report.vms) EXPECT_EQ(vm.allocation.hint, 3u);
  inputs.inputsMissingSince = kNow - std::chrono::milliseconds(3001);
  report = decideTick({}, inputs, state, 6);
  EXPECT_TRUE(report.hintsWithdrawn);
  for (const auto& vm : report.vms) {
    EXPECT_FALSE(vm.allocation.hint.has_value());
    EXPECT_NE(vm.allocation.reason.find("hints stopped"), std::string::npos) << vm.allocation.reason;
    EXPECT_FALSE(vm.hint.has_value()) << "nothing is sent";
  }
  EXPECT_TRUE(report.hintState.empty()) << "the next decision starts from no hints";
}

TEST(DecideTickMissingInputs, AVmNeverHintedIsNotHintedOnMissingInputs) {
  TickInputs inputs = quietHost();
  inputs.missingInputs.push_back("host CPU time: unreadable");
  std::map<std::string, HintState> state;
  const TickReport report = decideTick({}, inputs, state, 1);
  for (const auto& vm : report.vms) EXPECT_FALSE(vm.allocation.hint.has_value());
}

TEST(DecideTickMissingInputs, CompleteInputsDecideNormally) {
  TickInputs inputs = quietHost();
  auto state = hinted(1);
  const TickReport report = decideTick(AllocationConfig{std::chrono::milliseconds(0), 0.25}, inputs, state, 5);
  EXPECT_FALSE(report.inputsMissing.has_value());
  for (const auto& vm : report.vms) EXPECT_EQ(vm.allocation.hint, 4u) << "unfolded: no contention";
}

// Guest-reported demand: evidence only while fresh, only from cooperative agents.
TickInputs idleButReporting(double reported, Clock::time_point reportedAt, bool cooperative) {
  TickInputs inputs = quietHost();
  inputs.poolCpus = 2;
  for (auto& [name, channel] : inputs.channels) {
    channel.state = ChannelState::Ready;
    channel.cooperative = cooperative;
    channel.agentHello = protocol::Hello{
        protocol::Role::Agent, {1}, "agent", protocol::AgentInfo{protocol::CpuSet::range(0, 3), 1, 1, {}, {}, std::nullopt, true}};
    channel.lastStatus = protocol::Status{reported, 0, 1000, protocol::CpuSet::range(0, 3), protocol::Control::Host};
    channel.lastStatusAt = reportedAt;
  }
  return inputs;
}

TEST(DecideTickStatus, AFreshReportFromACooperativeAgentCounts) {
  TickInputs inputs = idleButReporting(4, kNow - std::chrono::milliseconds(500), true);
  std::map<std::string, HintState> state;
  const TickReport report = decideTick({}, inputs, state, 2);
  EXPECT_TRUE(report.contention);
  for (const auto& vm : report.vms) EXPECT_EQ(vm.allocation.hint, 1u);
}

TEST(DecideTickStatus, AStaleReportIsIgnored) {
  // Reported full demand 3 s ago and went silent (paused, or its agent killed).
  TickInputs inputs = idleButReporting(4, kNow - std::chrono::milliseconds(2500), true);
  auto state = hinted(4);
  const TickReport report = decideTick({}, inputs, state, 2);
  EXPECT_FALSE(report.contention);
  for (const auto& vm : report.vms) EXPECT_EQ(vm.allocation.hint, 4u);
}

TEST(DecideTickStatus, AReportFromAnAgentThatDoesNotAcknowledgeIsIgnored) {
  TickInputs inputs = idleButReporting(4, kNow, false);
  std::map<std::string, HintState> state;
  const TickReport report = decideTick({}, inputs, state, 2);
  EXPECT_FALSE(report.contention);
  for (const auto& vm : report.vms) {
    EXPECT_EQ(vm.allocation.hint, 4u) << "a reachable agent that has not acknowledged is hinted all vCPUs";
    EXPECT_NE(vm.allocation.reason.find("not acknowledged"), std::string::npos) << vm.allocation.reason;
  }
}

TEST(DecideTickStatus, AReportIsCappedAtTheVmsVcpus) {
  TickInputs inputs = idleButReporting(1e6, kNow, true);
  inputs.poolCpus = 16;
  std::map<std::string, HintState> state;
  const TickReport report = decideTick({}, inputs, state, 2);
  EXPECT_DOUBLE_EQ(report.totalDemand, 8.0);
  EXPECT_FALSE(report.contention);
}

TEST(DecideTickStatus, AReportOlderThanTwoOfItsOwnIntervalsIsStaleEvenWithinTheCap) {
  ChannelSnapshot channel;
  channel.cooperative = true;
  channel.lastStatus = protocol::Status{2, 0, 200, {}, protocol::Control::Host};
  channel.lastStatusAt = kNow - std::chrono::milliseconds(401);
  EXPECT_FALSE(statusIsFresh(channel, kNow, std::chrono::milliseconds(3000)));
  channel.lastStatusAt = kNow - std::chrono::milliseconds(399);
  EXPECT_TRUE(statusIsFresh(channel, kNow, std::chrono::milliseconds(3000)));
  channel.lastStatus->intervalMs = 100000;  // a guest claiming a long interval is still capped
  channel.lastStatusAt = kNow - std::chrono::milliseconds(3001);
  EXPECT_FALSE(statusIsFresh(channel, kNow, std::chrono::milliseconds(3000)));
}

TEST(DecideTickStatus, ADemandThatMovedAfterTheWindowBeganIsTheReportOnItsOwn) {
  // The host saw every vCPU of both VMs want to run all tick (demand 8 on 2
  // CPUs); both agents' reports dropped to 0 tasks after the samples' window began.
  TickInputs inputs = contendedPool(2, 0.25);
  inputs.now = kNow;
  for (auto& [name, channel] : inputs.channels) {
    channel.state = ChannelState::Ready;
    channel.lastStatus = protocol::Status{0, 0, 1000, protocol::CpuSet::range(0, 3), protocol::Control::Host};
    channel.lastStatusAt = kNow - std::chrono::milliseconds(100);
    channel.lastDemandChangeAt = kNow - std::chrono::milliseconds(200);
  }
  inputs.windowStartedAt = kNow - std::chrono::milliseconds(300);
  std::map<std::string, HintState> state;
  TickReport report = decideTick({}, inputs, state, 2);
  EXPECT_DOUBLE_EQ(report.totalDemand, 0.0) << "both went idle within the window";
  EXPECT_FALSE(report.contention);
  // The same reports, moved before the window began: the host's view counts too.
  inputs.windowStartedAt = kNow - std::chrono::milliseconds(150);
  state.clear();
  report = decideTick({}, inputs, state, 3);
  EXPECT_DOUBLE_EQ(report.totalDemand, 8.0);
  EXPECT_TRUE(report.contention);
  // Fresh reports that never moved (a guest that always says 0 while the host
  // sees it busy) do not count as idle either.
  for (auto& [name, channel] : inputs.channels) channel.lastDemandChangeAt = kNow - std::chrono::hours(1);
  inputs.windowStartedAt = kNow - std::chrono::milliseconds(300);
  state.clear();
  report = decideTick({}, inputs, state, 4);
  EXPECT_DOUBLE_EQ(report.totalDemand, 8.0);
}

}  // namespace
}  // namespace vcpufold::hostd
