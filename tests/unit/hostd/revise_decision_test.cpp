// SPDX-License-Identifier: GPL-2.0-or-later
// reviseDecision: a decision between ticks keeps the tick's rows (records,
// loads, weights) and must decide exactly what decideTick decides on the same
// inputs with the newer channels and time. Drawn fleets: pinned pools, a VM
// without a sample (its pool held), policies, weights, agents that cooperate
// or not, fresh and stale reports, SMT guests and a kernel class that is not
// folded on auto hints.

#include <gtest/gtest.h>

#include <random>

#include "vcpufold/hostd/tick.h"

namespace vcpufold::hostd {
namespace {

using protocol::CpuSet;
using std::chrono::milliseconds;

struct Draw {
  std::mt19937 random;
  unsigned below(unsigned n) { return static_cast<unsigned>(random() % n); }
  double unit() { return std::uniform_real_distribution<double>(0.0, 1.0)(random); }
};

ChannelSnapshot drawChannel(Draw& draw, std::uint32_t vcpus, std::chrono::steady_clock::time_point now) {
  ChannelSnapshot channel;
  channel.state = draw.below(6) == 0 ? ChannelState::Connecting : ChannelState::Ready;
  channel.cooperative = draw.below(5) != 0;
  if (draw.below(4) != 0) {
    protocol::Hello hello;
    hello.role = protocol::Role::Agent;
    protocol::AgentInfo agent;
    agent.online = CpuSet::range(0, vcpus - 1);
    agent.threadsPerCore = draw.below(3) == 0 ? 2 : 1;
    if (draw.below(6) == 0) {
      agent.kernelClass = "stock-before-6.6";
      agent.foldsOnAutoHints = false;
    }
    hello.agent = agent;
    channel.agentHello = hello;
  }
  if (draw.below(5) != 0) {
    channel.lastStatus =
        protocol::Status{draw.unit() * vcpus * 1.5, 300, 1000, CpuSet::range(0, vcpus - 1), protocol::Control::Host};
    // Some reports fresh, some stale (older than two of their intervals).
    channel.lastStatusAt = now - milliseconds(draw.below(3000));
    channel.lastDemandChangeAt = channel.lastStatusAt - milliseconds(draw.below(2000));
  }
  return channel;
}

TickInputs drawFleet(Draw& draw) {
  TickInputs inputs;
  inputs.poolCpuSet = CpuSet::range(0, 5);
  inputs.poolCpus = 6;
  inputs.poolSource = "test";
  inputs.now = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  inputs.windowStartedAt = inputs.now - milliseconds(1000);
  const unsigned vms = 2 + draw.below(11);
  for (unsigned i = 0; i < vms; ++i) {
    VmRecord vm;
    vm.name = "vm-" + std::to_string(i);
    vm.vcpus = 1 + draw.below(8);
    switch (draw.below(4)) {
      case 0:
        vm.placement = placementOf(std::vector<CpuSet>(vm.vcpus, CpuSet{0, 1}), "test");
        break;
      case 1:
        vm.placement = placementOf(std::vector<CpuSet>(vm.vcpus, CpuSet{2, 3}), "test");
        break;
      default:
        break;  // unpinned: anywhere in the pool
    }
    switch (draw.below(6)) {
      case 0:
        vm.policy.mode = FoldMode::Fixed;
        vm.policy.fixedVcpus = 1 + draw.below(vm.vcpus);
        break;
      case 1:
        vm.policy.mode = FoldMode::Off;
        break;
      default:
        break;
    }
    if (draw.below(3) == 0) vm.policy.weight = 25 + draw.below(400);
    std::vector<VcpuCounters> before(vm.vcpus), after(vm.vcpus);
    for (auto& counters : after) {
      const double run = draw.unit();
      counters.runNs = static_cast<std::uint64_t>(run * 1e9);
      counters.delayNs = static_cast<std::uint64_t>(draw.unit() * (1 - run) * 1e9);
    }
    inputs.previousSamples[vm.name] = VmSample{before, 0, std::nullopt};
    if (draw.below(12) != 0) inputs.samples[vm.name] = VmSample{after, 1'000'000'000, std::nullopt};
    if (draw.below(6) != 0) inputs.channels[vm.name] = drawChannel(draw, vm.vcpus, inputs.now);
    inputs.vms.push_back(vm);
  }
  inputs.hostBusyCpus = 5.5;
  return inputs;
}

// What a decision between ticks may see differ: channels, recent demand, time.
void moveChannelsAndTime(Draw& draw, TickInputs& inputs) {
  inputs.now += milliseconds(50 + draw.below(700));
  for (const VmRecord& vm : inputs.vms) {
    switch (draw.below(5)) {
      case 0:
        inputs.channels[vm.name] = drawChannel(draw, vm.vcpus, inputs.now);
        break;
      case 1:
        inputs.channels.erase(vm.name);
        break;
      default:
        break;  // as it was
    }
    if (draw.below(8) == 0) inputs.recentObservedDemand[vm.name] = draw.unit() * vm.vcpus;
  }
}

void expectSameDecision(const TickReport& revised, const TickReport& decided) {
  ASSERT_EQ(revised.vms.size(), decided.vms.size());
  for (std::size_t i = 0; i < decided.vms.size(); ++i) {
    const VmReport& a = revised.vms[i];
    const VmReport& b = decided.vms[i];
    SCOPED_TRACE(b.record.name);
    EXPECT_EQ(a.record.name, b.record.name);
    EXPECT_EQ(a.record.vcpus, b.record.vcpus);
    EXPECT_EQ(a.sampled, b.sampled);
    EXPECT_EQ(a.load.has_value(), b.load.has_value());
    if (a.load && b.load) {
      EXPECT_DOUBLE_EQ(a.load->demandCpus, b.load->demandCpus);
    }
    EXPECT_DOUBLE_EQ(a.weight, b.weight);
    EXPECT_EQ(a.channel.cooperative, b.channel.cooperative);
    EXPECT_EQ(a.channel.lastStatus, b.channel.lastStatus);
    EXPECT_EQ(a.statusFresh, b.statusFresh);
    EXPECT_EQ(a.allocation.hint, b.allocation.hint);
    EXPECT_EQ(a.allocation.reason, b.allocation.reason);
    EXPECT_EQ(a.allocation.state, b.allocation.state);
    EXPECT_DOUBLE_EQ(a.allocation.share, b.allocation.share);
    EXPECT_DOUBLE_EQ(a.allocation.demand, b.allocation.demand);
    EXPECT_EQ(a.pool, b.pool);
    EXPECT_EQ(a.inputsMissing, b.inputsMissing);
    EXPECT_EQ(a.hint, b.hint);
  }
  EXPECT_EQ(revised.inputsMissing, decided.inputsMissing);
  EXPECT_EQ(revised.contention, decided.contention);
  EXPECT_DOUBLE_EQ(revised.capacity, decided.capacity);
  EXPECT_DOUBLE_EQ(revised.totalDemand, decided.totalDemand);
  EXPECT_DOUBLE_EQ(revised.vmRunCpus, decided.vmRunCpus);
  ASSERT_EQ(revised.pools.size(), decided.pools.size());
  for (std::size_t p = 0; p < decided.pools.size(); ++p) {
    EXPECT_EQ(revised.pools[p].name, decided.pools[p].name);
    EXPECT_DOUBLE_EQ(revised.pools[p].capacity, decided.pools[p].capacity);
    EXPECT_DOUBLE_EQ(revised.pools[p].demand, decided.pools[p].demand);
    EXPECT_EQ(revised.pools[p].contention, decided.pools[p].contention);
    EXPECT_EQ(revised.pools[p].inputsMissing, decided.pools[p].inputsMissing);
    EXPECT_EQ(revised.pools[p].hintsWithdrawn, decided.pools[p].hintsWithdrawn);
  }
  EXPECT_EQ(revised.hintState, decided.hintState);
}

TEST(ReviseDecision, DecidesWhatAWholeDecisionDecidesOnTheNewerChannelsAndTime) {
  Draw draw{std::mt19937(11)};
  int withHeldPool = 0, withContention = 0;
  for (int fleet = 0; fleet < 300; ++fleet) {
    SCOPED_TRACE("fleet " + std::to_string(fleet));
    TickInputs inputs = drawFleet(draw);
    const TickReport tick = decideTick({}, inputs, {}, 1);
    TickReport latest = tick;
    // Two decisions between ticks in a row, each on channels moved since.
    for (int event = 0; event < 2; ++event) {
      const HintStates state = latest.hintState;
      moveChannelsAndTime(draw, inputs);
      const TickReport decided = decideTick({}, inputs, state, 2);
      latest = reviseDecision({}, std::move(latest), inputs, state, 2);
      expectSameDecision(latest, decided);
      if (::testing::Test::HasFailure()) return;
    }
    withHeldPool += tick.inputsMissing ? 1 : 0;
    withContention += tick.contention ? 1 : 0;
  }
  // The draws reach the cases that matter.
  EXPECT_GT(withHeldPool, 20);
  EXPECT_GT(withContention, 50);
}

}  // namespace
}  // namespace vcpufold::hostd
