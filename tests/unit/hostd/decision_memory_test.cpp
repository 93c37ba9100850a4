// SPDX-License-Identifier: GPL-2.0-or-later
// DecisionMemory: what hostd's decisions carry from one snapshot to the next,
// and when a decision between ticks is called for.

#include "vcpufold/hostd/decision_memory.h"

#include <gtest/gtest.h>

namespace vcpufold::hostd {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

const Clock::time_point kStart = Clock::time_point{} + std::chrono::hours(1);

// Two cooperative 4-vCPU VMs on 2 pCPUs; every vCPU has run `runNs` and
// waited `delayNs` in total by snapshot `cycle`, one second apart.
HostSnapshot snapshotAt(std::uint64_t cycle, std::uint64_t runNs, std::uint64_t delayNs) {
  HostSnapshot snapshot;
  snapshot.cycle = cycle;
  snapshot.takenAt = kStart + std::chrono::seconds(cycle);
  snapshot.inventoryRead = true;
  for (const char* name : {"vm1", "vm2"}) {
    VmRecord vm;
    vm.name = name;
    vm.vcpus = 4;
    vm.channelSocket = std::string("/run/") + name + ".sock";
    snapshot.records.push_back(vm);
    VmSample sample;
    sample.monotonicNs = static_cast<std::int64_t>(cycle) * 1'000'000'000;
    sample.vcpus.assign(4, VcpuCounters{runNs, delayNs});
    snapshot.samples[name] = sample;
  }
  snapshot.pool = VmCpuPool{protocol::CpuSet{0, 1}, "test"};
  return snapshot;
}

ChannelSnapshots cooperativeChannels() {
  ChannelSnapshots channels;
  for (const char* name : {"vm1", "vm2"}) {
    ChannelSnapshot channel;
    channel.state = ChannelState::Ready;
    channel.cooperative = true;
    channel.agentHello = protocol::Hello{protocol::Role::Agent, {1}, "agent", protocol::AgentInfo{}};
    channels[name] = channel;
  }
  return channels;
}

DecisionSettings settings() {
  return DecisionSettings{AllocationConfig{}, milliseconds(3000), milliseconds(10'000), 0, {}};
}

}  // namespace

TEST(DecisionMemory, TheNextSnapshotIsMeasuredAgainstTheLastDecidedOne) {
  DecisionMemory memory;
  const HostSnapshot first = snapshotAt(1, 0, 0);
  const auto& opening =
      memory.decideOnSnapshot(settings(), first.records, &first, std::nullopt, cooperativeChannels(), first.takenAt, 1);
  EXPECT_FALSE(opening.vms[0].load) << "nothing to compare the first samples with";
  // A second later every vCPU ran a quarter and waited the rest: 16 vCPUs want 2 pCPUs.
  const HostSnapshot second = snapshotAt(2, 250'000'000, 750'000'000);
  const auto& report = memory.decideOnSnapshot(settings(), second.records, &second, std::nullopt, cooperativeChannels(),
                                               second.takenAt, 2);
  ASSERT_TRUE(report.vms[0].load);
  EXPECT_NEAR(report.vms[0].load->demandCpus, 4.0, 1e-9);
  EXPECT_TRUE(report.contention);
  ASSERT_TRUE(report.vms[0].hint);
  EXPECT_EQ(report.vms[0].hint->vcpus, 1u);
  EXPECT_EQ(report.vms[0].hint->ttlMs, 3000u) << "the lease goes out with the hint";
  EXPECT_TRUE(memory.canRevise());
  EXPECT_FALSE(memory.inputsMissingSince());
}

TEST(DecisionMemory, AStaleSnapshotHoldsAndStartsAMissingInputEpisode) {
  DecisionMemory memory;
  const HostSnapshot first = snapshotAt(1, 0, 0);
  memory.decideOnSnapshot(settings(), first.records, &first, std::nullopt, cooperativeChannels(), first.takenAt, 1);
  const HostSnapshot second = snapshotAt(2, 250'000'000, 750'000'000);
  memory.decideOnSnapshot(settings(), second.records, &second, std::nullopt, cooperativeChannels(), second.takenAt, 2);
  const auto later = second.takenAt + std::chrono::seconds(5);
  const auto& held =
      memory.decideOnSnapshot(settings(), second.records, &second, std::string("no inventory snapshot for 5000 ms"),
                              cooperativeChannels(), later, 3);
  ASSERT_TRUE(held.inputsMissing);
  EXPECT_EQ(*held.inputsMissing, "no inventory snapshot for 5000 ms");
  ASSERT_TRUE(held.vms[0].hint);
  EXPECT_EQ(held.vms[0].hint->vcpus, 1u) << "the hint in force is held, not changed";
  EXPECT_EQ(memory.inputsMissingSince(), later);
  EXPECT_FALSE(memory.canRevise()) << "nothing is decided anew between ticks while inputs are missing";
  EXPECT_EQ(memory.decideOnEvent(settings(), cooperativeChannels(), later, 4), nullptr);
  // Inputs complete again: the episode ends.
  const HostSnapshot third = snapshotAt(8, 1'750'000'000, 5'250'000'000);
  memory.decideOnSnapshot(settings(), third.records, &third, std::nullopt, cooperativeChannels(), third.takenAt, 5);
  EXPECT_FALSE(memory.inputsMissingSince());
  EXPECT_TRUE(memory.canRevise());
}

TEST(DecisionMemory, ADemandReportThatMovesByATaskCallsForADecision) {
  DecisionMemory memory;
  EXPECT_FALSE(memory.demandMoved("vm1", 4.0, true)) << "no decision to revise yet";
  const HostSnapshot first = snapshotAt(1, 0, 0);
  memory.decideOnSnapshot(settings(), first.records, &first, std::nullopt, cooperativeChannels(), first.takenAt, 1);
  const HostSnapshot second = snapshotAt(2, 250'000'000, 750'000'000);
  memory.decideOnSnapshot(settings(), second.records, &second, std::nullopt, cooperativeChannels(), second.takenAt, 2);
  // The decision used the observed demand of 4 CPUs.
  EXPECT_FALSE(memory.demandMoved("vm1", 3.5, true)) << "half a task is noise";
  const auto moved = memory.demandMoved("vm1", 0.0, true);
  ASSERT_TRUE(moved);
  EXPECT_EQ(*moved, "vm1 reports demand 0.00 (was 4.00)");
  EXPECT_FALSE(memory.demandMoved("vm1", 0.0, false)) << "the word of an agent that does not acknowledge";
  EXPECT_FALSE(memory.demandMoved("vm9", 0.0, true)) << "a VM the decision did not see";
  // The decision between ticks reuses the samples with the channels as they are now.
  auto channels = cooperativeChannels();
  channels["vm2"].cooperative = false;
  const TickReport* revised = memory.decideOnEvent(settings(), channels, second.takenAt + milliseconds(300), 3);
  ASSERT_NE(revised, nullptr);
  ASSERT_TRUE(revised->vms[1].hint);
  EXPECT_EQ(revised->vms[1].hint->vcpus, 4u) << "an agent that stopped acknowledging is hinted all its vCPUs";
}

TEST(DecisionMemory, AVmSwingingItsDemandCallsForItsBudgetOfDecisionsThenWaitsForTheTick) {
  DecisionMemory memory;
  const HostSnapshot first = snapshotAt(1, 0, 0);
  memory.decideOnSnapshot(settings(), first.records, &first, std::nullopt, cooperativeChannels(), first.takenAt, 1);
  unsigned allowed = 0;
  for (int i = 0; i < 500; ++i) allowed += memory.allowEventDecisionFor("vm1", kStart + milliseconds(10 * i)) ? 1U : 0U;
  EXPECT_EQ(allowed, kEventDecisionsPerVm) << "500 swings in 5 s: the budget, the rest wait for the tick";
  EXPECT_TRUE(memory.allowEventDecisionFor("vm2", kStart + milliseconds(4990))) << "a budget per VM, not shared";
  EXPECT_TRUE(memory.allowEventDecisionFor("vm1", kStart + kEventDecisionWindow + milliseconds(1))) << "a new window";
}

TEST(DecisionMemory, OnlyARiseBeyondWhatTheSamplesShowedIsWorthMeasuring) {
  DecisionMemory memory;
  EXPECT_FALSE(memory.claimNeedsEvidence("vm1", 4.0)) << "no decision yet";
  const HostSnapshot first = snapshotAt(1, 0, 0);
  memory.decideOnSnapshot(settings(), first.records, &first, std::nullopt, cooperativeChannels(), first.takenAt, 1);
  const HostSnapshot second = snapshotAt(2, 250'000'000, 750'000'000);
  memory.decideOnSnapshot(settings(), second.records, &second, std::nullopt, cooperativeChannels(), second.takenAt, 2);
  // The samples showed vm1 wanting 4 CPUs: a report of 4 needs nothing more.
  EXPECT_FALSE(memory.claimNeedsEvidence("vm1", 4.0));
  EXPECT_TRUE(memory.claimNeedsEvidence("vm1", 4.5)) << "beyond what the samples showed";
  EXPECT_FALSE(memory.claimNeedsEvidence("vm1", 4.5, 4.4)) << "a measure since shows it";
  EXPECT_TRUE(memory.claimNeedsEvidence("vm1", 4.5, 1.0)) << "a measure that fell short: measured again";
  EXPECT_FALSE(memory.claimNeedsEvidence("vm9", 4.0)) << "a VM the decision did not see";
}

TEST(DecisionMemory, ASnapshotOlderThanThreeTicksIsStale) {
  EXPECT_FALSE(snapshotIsStale(kStart, kStart + milliseconds(3000), milliseconds(1000)));
  EXPECT_TRUE(snapshotIsStale(kStart, kStart + milliseconds(3001), milliseconds(1000)));
  EXPECT_TRUE(snapshotIsStale(kStart, kStart + milliseconds(301), milliseconds(100)));
}

TEST(DecisionMemory, ASnapshotTooSoonAfterTheLastDecidedOneWaits) {
  DecisionMemory memory;
  EXPECT_TRUE(memory.worthDeciding(kStart, milliseconds(1000)));
  EXPECT_FALSE(memory.worthDeciding(kStart + milliseconds(400), milliseconds(1000)));
  EXPECT_TRUE(memory.worthDeciding(kStart + milliseconds(600), milliseconds(1000)));
  EXPECT_FALSE(memory.worthDeciding(kStart + milliseconds(700), milliseconds(1000))) << "measured from the last taken";
}

}  // namespace vcpufold::hostd
