// SPDX-License-Identifier: GPL-2.0-or-later
// decideTick: how the host's non-VM load enters the VMs' capacity.

#include "vcpufold/hostd/tick.h"

#include <gtest/gtest.h>

#include "vcpufold/protocol/codec.h"

namespace vcpufold::hostd {
namespace {

// A cooperative VM whose vCPUs counted `counters` over a 1 s window from 0;
// with processNs, its whole QEMU process ran that long in the window.
void addCooperativeVm(TickInputs& inputs, const std::string& name, std::vector<VcpuCounters> counters,
                      std::optional<std::uint64_t> processNs = std::nullopt) {
  VmRecord vm;
  vm.name = name;
  vm.vcpus = static_cast<std::uint32_t>(counters.size());
  inputs.vms.push_back(vm);
  inputs.previousSamples[name] =
      VmSample{std::vector<VcpuCounters>(counters.size()), 0, processNs ? std::optional<std::uint64_t>(0) : std::nullopt};
  inputs.samples[name] = VmSample{std::move(counters), 1'000'000'000, processNs};
  ChannelSnapshot channel;
  channel.cooperative = true;
  inputs.channels[name] = channel;
}

// Two cooperative 4-vCPU VMs, every vCPU wanting to run all of a 1 s tick and
// running `runShare` of it, on a pool of `pool` CPUs.
TickInputs contendedPool(double pool, double runShare) {
  TickInputs inputs;
  inputs.poolCpus = pool;
  const auto run = static_cast<std::uint64_t>(runShare * 1e9);
  for (const char* name : {"vm1", "vm2"})
    addCooperativeVm(inputs, name, std::vector<VcpuCounters>(4, VcpuCounters{run, 1'000'000'000 - run}));
  return inputs;
}

TEST(DecideTick, AOneTickSpikeOfNonVmLoadLeavesTheCapacity) {
  TickInputs inputs = contendedPool(4, 0.25);  // the VMs run 2 CPUs
  inputs.hostBusyCpus = 4.0;                   // 2 CPUs of something else, this tick only
  inputs.previousNonVmCpus = {{"0-3", 0.0}};   // a pool is named by its CPUs
  HintStates state;
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
  HintStates state;
  const TickReport report = decideTick({}, inputs, state, 3);
  EXPECT_DOUBLE_EQ(report.nonVmCpus, 2.0);
  EXPECT_DOUBLE_EQ(report.capacity, 2.0);
  for (const auto& vm : report.vms) EXPECT_EQ(vm.allocation.hint, 1u) << vm.record.name;
}

TEST(DecideTick, CountsTheSmallerOfTwoTicksNonVmLoad) {
  TickInputs inputs = contendedPool(4, 0.25);
  inputs.hostBusyCpus = 3.0;                  // 1 CPU of other load now
  inputs.previousNonVmCpus = {{"0-3", 1.5}};  // 1.5 last tick
  HintStates state;
  const TickReport report = decideTick({}, inputs, state, 3);
  EXPECT_DOUBLE_EQ(report.measuredNonVmCpus, 1.0);
  EXPECT_DOUBLE_EQ(report.nonVmCpus, 1.0);
  EXPECT_DOUBLE_EQ(report.capacity, 3.0);
}

TEST(DecideTick, WithoutALastTickTheLoadCountsAsMeasured) {
  TickInputs inputs = contendedPool(4, 0.25);
  inputs.hostBusyCpus = 4.0;
  HintStates state;
  const TickReport report = decideTick({}, inputs, state, 1);
  EXPECT_DOUBLE_EQ(report.nonVmCpus, 2.0);
  EXPECT_DOUBLE_EQ(report.capacity, 2.0);
}

TEST(DecideTick, AVcpuHotplugIsHintedAtTheSamplesCountNotTheRecordsOlderOne) {
  // The record (read at a refresh) still says 2 vCPUs; this tick's sample has 4.
  TickInputs inputs = contendedPool(16, 1.0);
  inputs.hostBusyCpus = 8.0;
  inputs.vms[0].vcpus = 2;
  HintStates state;
  TickReport report = decideTick({}, inputs, state, 4);
  EXPECT_EQ(report.vms[0].record.vcpus, 4u);
  EXPECT_EQ(report.vms[0].allocation.hint, 4u) << "all it has, not the 2 it had";
  // Unplugged to 2: the previous sample had 4 vCPUs; the 2 both have still
  // give its load (no missing sample), and the hint names no vCPU it lost.
  inputs = contendedPool(16, 1.0);
  inputs.hostBusyCpus = 6.0;
  inputs.samples["vm1"].vcpus.resize(2);
  report = decideTick({}, inputs, state, 5);
  EXPECT_FALSE(report.inputsMissing);
  EXPECT_EQ(report.vms[0].record.vcpus, 2u);
  EXPECT_EQ(report.vms[0].allocation.hint, 2u);
  ASSERT_TRUE(report.vms[0].load);
  EXPECT_NEAR(report.vms[0].load->demandCpus, 2.0, 1e-9);
}

TEST(DecideTick, AVmsOwnQemuThreadsAreItsLoadNotThePools) {
  // "noisy" keeps its QEMU's I/O threads busy (2 CPUs) beside one busy vCPU;
  // two quiet VMs want 4 vCPUs each, on 4 pCPUs. Counted as the pool's load,
  // those 2 CPUs shrank everyone's capacity and folded the quiet VMs to 1;
  // counted as noisy's, noisy pays for them from its own share.
  TickInputs inputs;
  inputs.poolCpus = 4;
  inputs.hostBusyCpus = 4.0;
  inputs.previousNonVmCpus = {{"0-3", 2.0}};
  inputs.now = std::chrono::steady_clock::time_point{} + std::chrono::seconds(10);
  const VcpuCounters quietVcpu{125'000'000, 875'000'000};
  addCooperativeVm(inputs, "noisy", {{1'000'000'000, 0}, {0, 0}}, 3'000'000'000);
  addCooperativeVm(inputs, "quiet1", {quietVcpu, quietVcpu, quietVcpu, quietVcpu}, 500'000'000);
  addCooperativeVm(inputs, "quiet2", {quietVcpu, quietVcpu, quietVcpu, quietVcpu}, 500'000'000);
  const TickReport report = decideTick({}, inputs, {}, 10);
  EXPECT_NEAR(report.nonVmCpus, 0.0, 1e-9) << "nothing is left of the host's own load";
  EXPECT_NEAR(report.capacity, 4.0, 1e-9);
  EXPECT_NEAR(report.vms[0].allocation.overhead, 2.0, 1e-9);
  EXPECT_NEAR(report.vms[0].allocation.demand, 3.0, 1e-9) << "its vCPU and its QEMU's threads";
  EXPECT_EQ(report.vms[0].allocation.hint, 1u) << report.vms[0].allocation.reason;
  EXPECT_NE(report.vms[0].allocation.reason.find("of which 2.00 its QEMU's own threads"), std::string::npos)
      << report.vms[0].allocation.reason;
  for (const std::size_t i : {std::size_t{1}, std::size_t{2}}) EXPECT_EQ(report.vms[i].allocation.hint, 2u) << report.vms[i].allocation.reason;
}

// The fault of a guest's word: an agent acknowledges with every CPU (so it
// never folds itself) and reports demand for all four vCPUs while they sit
// idle; beside it a VM runs one busy task on a 2-CPU host.
TEST(DecideTick, AnIdleGuestClaimingDemandFoldsNobody) {
  TickInputs inputs;
  inputs.poolCpus = 2;
  inputs.hostBusyCpus = 1.02;
  inputs.now = std::chrono::steady_clock::time_point{} + std::chrono::seconds(10);
  inputs.windowStartedAt = inputs.now - std::chrono::seconds(1);
  // vCPU 0 runs busyVcpu0Ns of the 1 s window, vCPU 1 a little housekeeping.
  const auto counters = [](std::uint64_t busyVcpu0Ns) {
    return std::vector<VcpuCounters>{{busyVcpu0Ns, 0}, {5'000'000, 0}, {}, {}};
  };
  addCooperativeVm(inputs, "claims", counters(10'000'000));
  addCooperativeVm(inputs, "busy", counters(1'000'000'000));
  ChannelSnapshot& claims = inputs.channels["claims"];
  claims.lastStatus = protocol::Status{4.0, 0, 1000, protocol::CpuSet::range(0, 3), protocol::Control::Host};
  claims.lastStatusAt = inputs.now;
  claims.lastDemandChangeAt = inputs.now - std::chrono::seconds(5);
  HintStates state;
  state["claims"].hint = 4;
  state["busy"].hint = 4;
  const TickReport report = decideTick({}, inputs, state, 10);
  ASSERT_EQ(report.vms.size(), 2u);
  EXPECT_TRUE(report.vms[0].statusFresh) << "the claim is fresh: only the evidence sets it aside";
  EXPECT_TRUE(report.vms[0].allocation.reportDiscounted) << report.vms[0].allocation.reason;
  EXPECT_FALSE(report.contention) << report.vms[1].allocation.reason;
  EXPECT_EQ(report.vms[1].allocation.hint, 4u) << report.vms[1].allocation.reason;

  // The same claim from a guest folded to one saturated vCPU counts.
  inputs.samples["claims"].vcpus[0] = VcpuCounters{600'000'000, 400'000'000};
  state["claims"].hint = 1;
  const TickReport folded = decideTick({}, inputs, state, 11);
  EXPECT_FALSE(folded.vms[0].allocation.reportDiscounted) << folded.vms[0].allocation.reason;
  EXPECT_TRUE(folded.contention);
  EXPECT_NEAR(folded.vms[0].allocation.demand, 4.0, 1e-9);
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

HintStates hinted(std::uint32_t vcpus) {
  HintState state;
  state.hint = vcpus;
  return {{"vm1", state}, {"vm2", state}};
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

TEST(DecideTickMissingInputs, AHeldHintSpeaksOnlyOfItsOwnVm) {
  // vm2's sample is missing: the status names vm2; vm1's guest is told only
  // that its hint is held.
  TickInputs inputs = quietHost();
  inputs.samples.erase("vm2");
  auto state = hinted(4);
  const TickReport report = decideTick({}, inputs, state, 5);
  ASSERT_TRUE(report.inputsMissing.has_value());
  EXPECT_NE(report.vms[0].allocation.reason.find("no vCPU sample of vm2"), std::string::npos);
  ASSERT_TRUE(report.vms[0].hint.has_value());
  EXPECT_EQ(report.vms[0].hint->reason, "inputs missing on the host: holding 4 vCPUs for up to 10000 ms");
  EXPECT_EQ(report.vms[0].hint->reason.find("vm2"), std::string::npos);
}

TEST(DecideTick, AReasonAlwaysEncodes) {
  // A VM or pool name may hold control characters, or a multi-byte character
  // where the cut falls: the hint still encodes, within the protocol's limit.
  const std::string euro = "\xE2\x82\xAC";
  for (const std::string& reason : {std::string(300, 'a'), std::string("line\nbreak\x1b[31m"), std::string(255, 'a') + euro,
                                    std::string(254, 'a') + euro, std::string("\xFF\xFE") + std::string(300, 'b'),
                                    std::string()}) {
    const protocol::Hint hint = wireHint(2, FoldMode::Auto, 3000, reason);
    EXPECT_LE(hint.reason.size(), 256u);
    EXPECT_FALSE(hint.reason.empty());
    auto framed = hint;
    framed.seq = 7;
    const auto line = protocol::encodeMessage(protocol::Message{framed}, 1);
    ASSERT_TRUE(line.ok()) << line.error().message;
    const protocol::DecodeResult back = protocol::decodeMessage(line.value());
    ASSERT_TRUE(back.ok()) << back.error().describe();
    EXPECT_EQ(std::get<protocol::Hint>(back.value().message).reason, hint.reason);
  }
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
  HintStates state;
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

TEST(DecideTickStatus, AFreshReportCountsWhereTheHostSeesTheVmUseWhatItHas) {
  // Idle vCPUs, fresh reports of 4 runnable tasks each: the host sees no use
  // of them, so the reports are set aside and nothing is contended.
  TickInputs inputs = idleButReporting(4, kNow - std::chrono::milliseconds(500), true);
  auto state = hinted(4);
  TickReport report = decideTick({}, inputs, state, 2);
  EXPECT_FALSE(report.contention);
  for (const auto& vm : report.vms) {
    EXPECT_EQ(vm.allocation.hint, 4u);
    EXPECT_TRUE(vm.allocation.reportDiscounted) << vm.allocation.reason;
  }
  // Folded to one vCPU each, that vCPU busy all tick: the tasks queued behind
  // the fold count, and the pool is contended.
  for (auto& [name, sample] : inputs.samples) sample.vcpus[0] = VcpuCounters{1'000'000'000, 0};
  inputs.hostBusyCpus = 2.0;
  state = hinted(1);
  report = decideTick({}, inputs, state, 3);
  EXPECT_TRUE(report.contention);
  for (const auto& vm : report.vms) {
    EXPECT_EQ(vm.allocation.hint, 1u) << vm.allocation.reason;
    EXPECT_FALSE(vm.allocation.reportDiscounted);
    EXPECT_NEAR(vm.allocation.demand, 4.0, 1e-9);
  }
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
  HintStates state;
  const TickReport report = decideTick({}, inputs, state, 2);
  EXPECT_FALSE(report.contention);
  for (const auto& vm : report.vms) {
    EXPECT_EQ(vm.allocation.hint, 4u) << "a reachable agent that has not acknowledged is hinted all vCPUs";
    EXPECT_NE(vm.allocation.reason.find("not acknowledged"), std::string::npos) << vm.allocation.reason;
  }
}

TEST(DecideTickStatus, AReportIsCappedAtTheVmsVcpus) {
  // Every vCPU busy (the host sees the VMs use all they have): a report of a
  // million tasks counts, at most the VMs' vCPUs.
  TickInputs inputs = idleButReporting(1e6, kNow, true);
  inputs.poolCpus = 16;
  for (auto& [name, sample] : inputs.samples) sample.vcpus.assign(4, VcpuCounters{1'000'000'000, 0});
  inputs.hostBusyCpus = 8.0;
  HintStates state;
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
  HintStates state;
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
