// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/allocation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace vcpufold::hostd;

namespace {

VmDemand vm(std::string name, std::uint32_t vcpus, double demand, double weight = 100, bool cooperative = true) {
  VmDemand d;
  d.name = std::move(name);
  d.vcpus = vcpus;
  d.observedDemand = demand;
  d.weight = weight;
  d.cooperative = cooperative;
  return d;
}

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A delay of k ticks of 1 s, as the tests below count it: asked for on k
// decisions in a row, the first one included.
AllocationConfig delayTicks(unsigned k, double margin = 0.25) {
  return AllocationConfig{milliseconds(k > 0 ? (k - 1) * 1000 : 0), margin};
}

HintStates stateOf(const Allocation& allocation) {
  HintStates state;
  for (const auto& out : allocation.vms) state[out.name] = out.state;
  return state;
}

// Runs allocation tick after tick (1 s apart) with the same inputs; returns the hints per tick.
Clock::time_point testNow{};
std::vector<std::vector<std::optional<std::uint32_t>>> run(const AllocationConfig& config, double capacity,
                                                           const std::vector<VmDemand>& vms, int ticks,
                                                           HintStates& state) {
  std::vector<std::vector<std::optional<std::uint32_t>>> hints;
  for (int t = 0; t < ticks; ++t) {
    testNow += std::chrono::seconds(1);
    const auto allocation = allocate(config, capacity, vms, state, testNow);
    state = stateOf(allocation);
    std::vector<std::optional<std::uint32_t>> row;
    for (const auto& out : allocation.vms) row.push_back(out.hint);
    hints.push_back(row);
  }
  return hints;
}

}  // namespace

TEST(WaterFill, FitsEveryoneWhenItCan) {
  EXPECT_EQ(waterFill(10, {1, 2, 3}, {1, 1, 1}), (std::vector<double>{1, 2, 3}));
}

TEST(WaterFill, EqualWeightsSplitEvenlyAndLeftoversGoToTheHungry) {
  const auto shares = waterFill(2, {4, 4, 4}, {1, 1, 1});
  for (double share : shares) EXPECT_NEAR(share, 2.0 / 3.0, 1e-9);
  const auto uneven = waterFill(3, {0.5, 4, 4}, {1, 1, 1});
  EXPECT_NEAR(uneven[0], 0.5, 1e-9);
  EXPECT_NEAR(uneven[1], 1.25, 1e-9);
  EXPECT_NEAR(uneven[2], 1.25, 1e-9);
}

TEST(WaterFill, WeightsScaleShares) {
  const auto shares = waterFill(3, {4, 4}, {200, 100});
  EXPECT_NEAR(shares[0], 2.0, 1e-9);
  EXPECT_NEAR(shares[1], 1.0, 1e-9);
}

TEST(Allocation, NoContentionMeansAllVcpus) {
  const auto allocation = allocate({}, 8, {vm("a", 4, 2.0), vm("b", 4, 3.0)}, {}, Clock::time_point{});
  EXPECT_FALSE(allocation.contention);
  EXPECT_EQ(allocation.vms[0].hint, 4u);
  EXPECT_EQ(allocation.vms[1].hint, 4u);
  EXPECT_NE(allocation.vms[0].reason.find("no contention"), std::string::npos);
}

TEST(Allocation, ThreeBusyVmsOnTwoCpus) {
  const auto allocation = allocate({}, 2, {vm("a", 4, 4), vm("b", 4, 4), vm("c", 4, 4)}, {}, Clock::time_point{});
  EXPECT_TRUE(allocation.contention);
  for (const auto& out : allocation.vms) {
    EXPECT_NEAR(out.share, 2.0 / 3.0, 1e-9);
    EXPECT_EQ(out.hint, 1u) << out.reason;
    EXPECT_NE(out.reason.find("fair share 0.67"), std::string::npos) << out.reason;
  }
}

TEST(Allocation, ReportedDemandBeatsWhatFoldingHides) {
  VmDemand folded = vm("folded", 4, 1.0);  // runs on its one preferred vCPU...
  folded.reportedDemand = 4.0;             // ...but has four runnable tasks
  folded.vcpusInUse = 1;                   // folded to 1: the host sees it use all it has
  const auto allocation = allocate({}, 6, {folded, vm("other", 4, 1.0)}, {}, Clock::time_point{});
  EXPECT_NEAR(allocation.vms[0].demand, 4.0, 1e-9);
  EXPECT_FALSE(allocation.vms[0].reportDiscounted);
  EXPECT_EQ(allocation.vms[0].hint, 4u) << "5 within 6: no contention, it may grow again";
}

TEST(Allocation, AReportWithoutTheHostsEvidenceDoesNotFoldANeighbour) {
  // An agent that acknowledges with every CPU (so it never folds itself)
  // claims demand for all its vCPUs while they sit idle; beside it a VM runs
  // one busy task on a 2-CPU host (capacity 1.9).
  VmDemand liar = vm("liar", 4, 0.02);
  liar.reportedDemand = 4.0;
  const VmDemand busy = vm("busy", 4, 1.0);
  for (std::optional<std::uint32_t> inUse : {std::optional<std::uint32_t>{}, std::optional<std::uint32_t>{4},
                                             std::optional<std::uint32_t>{1}}) {
    liar.vcpusInUse = inUse;
    const auto allocation = allocate({}, 1.9, {liar, busy}, {}, Clock::time_point{});
    EXPECT_FALSE(allocation.contention) << "the claim is not demand";
    EXPECT_NEAR(allocation.vms[0].demand, 0.02, 1e-9);
    EXPECT_TRUE(allocation.vms[0].reportDiscounted);
    EXPECT_NE(allocation.vms[0].reason.find("reported demand 4.00 not counted: the host sees it use 0.02 of " +
                                            std::to_string(inUse.value_or(4)) + " vCPUs"),
              std::string::npos)
        << allocation.vms[0].reason;
    EXPECT_EQ(allocation.vms[1].hint, 4u) << allocation.vms[1].reason;
    EXPECT_FALSE(allocation.vms[1].reportDiscounted);
  }
  // A measure since the samples that shows the vCPUs idle is no evidence
  // either; one that shows them all busy (an honest guest just woken) is.
  liar.vcpusInUse = std::nullopt;
  liar.recentObservedDemand = 0.05;
  EXPECT_FALSE(allocate({}, 1.9, {liar, busy}, {}, Clock::time_point{}).contention);
  liar.recentObservedDemand = 3.9;
  const auto woken = allocate({}, 1.9, {liar, busy}, {}, Clock::time_point{});
  EXPECT_TRUE(woken.contention);
  EXPECT_NEAR(woken.vms[0].demand, 4.0, 1e-9);
  EXPECT_FALSE(woken.vms[0].reportDiscounted);
  liar.recentObservedDemand = std::nullopt;
  // The same claim from a guest whose one preferred vCPU is saturated counts.
  liar.observedDemand = 0.9;
  liar.vcpusInUse = 1;
  const auto allocation = allocate({}, 1.9, {liar, busy}, {}, Clock::time_point{});
  EXPECT_TRUE(allocation.contention);
  EXPECT_NEAR(allocation.vms[0].demand, 4.0, 1e-9);
  EXPECT_FALSE(allocation.vms[0].reportDiscounted);
}

TEST(Allocation, AReportNeedsEvidenceForTwoWindowsAfterAnUnfold) {
  HintState state;
  state.hint = 3;
  EXPECT_FALSE(vcpusInUseDuring(nullptr, std::nullopt, Clock::time_point{})) << "not hinted";
  EXPECT_EQ(vcpusInUseDuring(&state, Clock::time_point{} + milliseconds(1000), Clock::time_point{} + milliseconds(2000)),
            3u);
  // Unfolded 1 -> 3 at 10 s; the windows are 1 s long.
  state.grewAt = Clock::time_point{} + milliseconds(10'000);
  state.hintBeforeGrowth = 1;
  const auto at = [](int ms) { return Clock::time_point{} + milliseconds(ms); };
  EXPECT_EQ(vcpusInUseDuring(&state, at(10'000), at(11'000)), 1u) << "the window of the unfold";
  EXPECT_EQ(vcpusInUseDuring(&state, at(11'000), at(12'000)), 1u) << "the next: the guest may have applied it late";
  EXPECT_EQ(vcpusInUseDuring(&state, at(12'000), at(13'000)), 3u);
  // And allocation remembers the growth: a folded busy guest unfolded by its
  // report keeps it counted while its samples catch up (no fold back).
  VmDemand folded = vm("folded", 4, 1.0);
  folded.reportedDemand = 4.0;
  folded.vcpusInUse = 1;
  HintStates hints;
  hints["folded"].hint = 1;
  auto allocation = allocate(delayTicks(0), 3.5, {folded, vm("other", 4, 1.0)}, hints, at(20'000));
  ASSERT_EQ(allocation.vms[0].hint, 3u) << allocation.vms[0].reason;
  EXPECT_EQ(allocation.vms[0].state.grewAt, at(20'000));
  EXPECT_EQ(allocation.vms[0].state.hintBeforeGrowth, 1u);
  hints = stateOf(allocation);
  folded.observedDemand = 2.0;  // half the window at 1, half at 3
  folded.vcpusInUse = vcpusInUseDuring(&hints["folded"], at(20'000), at(21'000));
  allocation = allocate(delayTicks(0), 3.5, {folded, vm("other", 4, 1.0)}, hints, at(21'000));
  EXPECT_EQ(allocation.vms[0].hint, 3u) << allocation.vms[0].reason;
  EXPECT_EQ(allocation.vms[0].state.grewAt, at(20'000)) << "kept while the hint holds";
}

TEST(Allocation, WholeGuestCoresAndPolicyBounds) {
  VmDemand smt = vm("smt", 8, 8);
  smt.threadsPerCore = 2;
  VmDemand bounded = vm("bounded", 8, 8);
  bounded.policy.minVcpus = 3;
  bounded.policy.maxVcpus = 6;
  const auto allocation = allocate({}, 4, {smt, bounded, vm("x", 8, 8), vm("y", 8, 8)}, {}, Clock::time_point{});
  EXPECT_EQ(allocation.vms[0].hint, 2u) << "share 1 rounds up to one whole SMT2 core";
  EXPECT_EQ(allocation.vms[1].hint, 3u) << "min-vcpus";
  const auto relaxed = allocate({}, 100, {smt, bounded}, {}, Clock::time_point{});
  EXPECT_EQ(relaxed.vms[1].hint, 6u) << "max-vcpus caps even without contention";
}

TEST(Allocation, PoliciesOffFixedGuestAndNoAgent) {
  VmDemand off = vm("off", 4, 4);
  off.policy.mode = FoldMode::Off;
  VmDemand fixed = vm("fixed", 4, 4);
  fixed.policy.mode = FoldMode::Fixed;
  fixed.policy.fixedVcpus = 2;
  VmDemand guest = vm("guest", 4, 4);
  guest.policy.mode = FoldMode::Guest;
  const VmDemand noAgent = vm("noagent", 4, 4, 100, false);
  const auto allocation = allocate({}, 2, {off, fixed, guest, noAgent}, {}, Clock::time_point{});
  EXPECT_EQ(allocation.vms[0].hint, 4u);
  EXPECT_EQ(allocation.vms[1].hint, 2u);
  EXPECT_FALSE(allocation.vms[2].hint);
  EXPECT_FALSE(allocation.vms[3].hint);
  EXPECT_NE(allocation.vms[3].reason.find("no working agent"), std::string::npos);
  EXPECT_NEAR(allocation.vms[1].demand, 2.0, 1e-9) << "a fixed VM cannot use more than its fixed size";
}

TEST(Allocation, AVmWhoseAgentDeclinesAutoHintsIsNotFoldedButCountedAtItsDemand) {
  // Three busy VMs on 2 pCPUs; one guest's kernel class is not folded by default.
  VmDemand declining = vm("stock612", 4, 4);
  declining.autoFoldDeclinedClass = "stock-6.6-and-later";
  const auto allocation =
      allocate({}, 2, {declining, vm("b", 4, 4), vm("c", 4, 4)}, {}, Clock::time_point{});
  EXPECT_TRUE(allocation.contention);
  EXPECT_EQ(allocation.vms[0].hint, 4u) << allocation.vms[0].reason;
  EXPECT_EQ(allocation.vms[0].reason.rfind("not folded: guest kernel (stock-6.6-and-later", 0), 0u)
      << allocation.vms[0].reason;
  EXPECT_NEAR(allocation.vms[0].demand, 4.0, 1e-9);
  // The others are folded to their fair share, as beside a VM with policy off.
  EXPECT_EQ(allocation.vms[1].hint, 1u) << allocation.vms[1].reason;
  EXPECT_EQ(allocation.vms[2].hint, 1u) << allocation.vms[2].reason;

  // Its policy fixed is an explicit ask: folded to the fixed size.
  declining.policy.mode = FoldMode::Fixed;
  declining.policy.fixedVcpus = 2;
  const auto fixed = allocate({}, 2, {declining, vm("b", 4, 4)}, {}, Clock::time_point{});
  EXPECT_EQ(fixed.vms[0].hint, 2u) << fixed.vms[0].reason;
  EXPECT_NE(fixed.vms[0].reason.find("policy fixed"), std::string::npos) << fixed.vms[0].reason;

  // Policy off stays off, and an agent that has not acknowledged stays hinted all.
  declining.policy.mode = FoldMode::Off;
  EXPECT_EQ(allocate({}, 2, {declining}, {}, Clock::time_point{}).vms[0].reason.rfind("policy off", 0), 0u);
}

TEST(Allocation, FoldAtOnceUnfoldAfterTheDelay) {
  const AllocationConfig config = delayTicks(3);
  HintStates state;
  auto hints = run(config, 2, {vm("a", 4, 4), vm("b", 4, 4)}, 1, state);
  EXPECT_EQ(hints[0][0], 1u);
  // b goes idle: a's fair share grows to 2 (capacity 2, b demands nothing).
  hints = run(config, 2, {vm("a", 4, 4), vm("b", 4, 0)}, 4, state);
  EXPECT_EQ(hints[0][0], 1u);
  EXPECT_EQ(hints[1][0], 1u);
  EXPECT_EQ(hints[2][0], 2u) << "unfolds on the third tick of the larger share";
  EXPECT_EQ(hints[3][0], 2u);
  // b wakes: a folds back at once.
  hints = run(config, 2, {vm("a", 4, 4), vm("b", 4, 4)}, 1, state);
  EXPECT_EQ(hints[0][0], 1u);
}

TEST(Allocation, AnUnfoldFallsDueAtTheDelayNotAtATick) {
  const AllocationConfig config{milliseconds(1000), 0.25};
  const Clock::time_point start{};
  HintStates state = stateOf(allocate(config, 2, {vm("a", 4, 4), vm("b", 4, 4)}, {}, start));
  EXPECT_EQ(state["a"].hint, 1u);
  EXPECT_FALSE(nextUnfoldDue(config, state));
  // b goes idle 100 ms later: a's share is 2, the unfold is pending from then.
  const std::vector<VmDemand> idle{vm("a", 4, 4), vm("b", 4, 0)};
  auto allocation = allocate(config, 2, idle, state, start + milliseconds(100));
  EXPECT_EQ(allocation.vms[0].hint, 1u);
  state = stateOf(allocation);
  ASSERT_TRUE(nextUnfoldDue(config, state));
  EXPECT_EQ(*nextUnfoldDue(config, state), start + milliseconds(1100));
  allocation = allocate(config, 2, idle, state, start + milliseconds(1099));
  EXPECT_EQ(allocation.vms[0].hint, 1u) << "1 ms early";
  state = stateOf(allocation);
  EXPECT_EQ(*nextUnfoldDue(config, state), start + milliseconds(1100)) << "the wait keeps its start";
  allocation = allocate(config, 2, idle, state, start + milliseconds(1100));
  EXPECT_EQ(allocation.vms[0].hint, 2u);
  EXPECT_NE(allocation.vms[0].reason.find("unfold to 2 vCPUs (asked for 1000 ms)"), std::string::npos)
      << allocation.vms[0].reason;
  EXPECT_FALSE(nextUnfoldDue(config, stateOf(allocation)));
}

TEST(Allocation, ANewerReportIsTheDemandOnItsOwn) {
  VmDemand quiet = vm("b", 4, 4.0);  // the host saw it busy
  quiet.reportedDemand = 0.0;        // then its agent said it went idle
  auto allocation = allocate({}, 2, {vm("a", 4, 4), quiet}, {}, Clock::time_point{});
  EXPECT_DOUBLE_EQ(allocation.vms[1].demand, 4.0) << "an older report: at least what the host saw";
  quiet.reportIsNewer = true;
  allocation = allocate({}, 2, {vm("a", 4, 4), quiet}, {}, Clock::time_point{});
  EXPECT_DOUBLE_EQ(allocation.vms[1].demand, 0.0);
  EXPECT_EQ(allocation.vms[0].hint, 2u) << "a gets the CPUs b left";
}

TEST(Allocation, ShareHoveringAtACoreBoundaryHoldsTheHint) {
  const AllocationConfig config = delayTicks(0, 0.25);
  HintStates state;
  // a's share moves between 0.95 and 1.15 CPUs as the capacity wobbles: hint 1 throughout.
  for (double capacity : {1.90, 2.30, 1.95, 2.25, 2.10, 1.92}) {
    const auto hints = run(config, capacity, {vm("a", 4, 4), vm("b", 4, 4)}, 1, state);
    EXPECT_EQ(hints[0][0], 1u) << "capacity " << capacity;
  }
  // A share that clears the margin unfolds.
  EXPECT_EQ(run(config, 2.6, {vm("a", 4, 4), vm("b", 4, 4)}, 1, state)[0][0], 2u);
}

TEST(Allocation, FlickeringDemandDoesNotFlap) {
  const AllocationConfig config = delayTicks(3);
  HintStates state;
  run(config, 2, {vm("a", 4, 4), vm("b", 4, 4)}, 1, state);
  // b alternates busy and idle every tick: a must never unfold.
  for (int t = 0; t < 20; ++t) {
    const auto hints = run(config, 2, {vm("a", 4, 4), vm("b", 4, t % 2 ? 4.0 : 0.0)}, 1, state);
    EXPECT_EQ(hints[0][0], 1u) << "tick " << t;
  }
}

TEST(Allocation, RandomisedProperties) {
  std::mt19937_64 random(2026);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const AllocationConfig config = delayTicks(3);
  int contended = 0;
  for (int round = 0; round < 5000; ++round) {
    const int count = 1 + static_cast<int>(random() % 8);
    const double capacity = 0.5 + unit(random) * 16;
    std::vector<VmDemand> vms;
    for (int i = 0; i < count; ++i) {
      VmDemand d = vm("vm" + std::to_string(i), 1 + static_cast<std::uint32_t>(random() % 16), 0,
                      1 + static_cast<double>(random() % 400), random() % 5 != 0);
      d.observedDemand = unit(random) * d.vcpus;
      if (random() % 2) d.reportedDemand = unit(random) * d.vcpus * 1.5;
      d.threadsPerCore = random() % 4 == 0 ? 2 : 1;
      if (d.threadsPerCore == 2 && d.vcpus % 2) ++d.vcpus;
      if (random() % 4 == 0) d.policy.minVcpus = 1 + static_cast<std::uint32_t>(random() % d.vcpus);
      if (random() % 4 == 0) d.policy.maxVcpus = d.policy.minVcpus + static_cast<std::uint32_t>(random() % 4);
      vms.push_back(d);
    }
    const auto allocation = allocate(config, capacity, vms, {}, Clock::time_point{});
    contended += allocation.contention;
    double totalShare = 0;
    for (std::size_t i = 0; i < vms.size(); ++i) {
      const auto& out = allocation.vms[i];
      const auto& in = vms[i];
      totalShare += out.share;
      EXPECT_LE(out.share, out.demand + 1e-9) << "nobody gets more than it wants";
      // Never hinted without an agent; always within min-vcpus..vCPUs (and max-vcpus).
      if (!in.cooperative) {
        EXPECT_FALSE(out.hint);
        continue;
      }
      ASSERT_TRUE(out.hint);
      const std::uint32_t upper = std::min(in.vcpus, in.policy.maxVcpus.value_or(in.vcpus));
      EXPECT_LE(*out.hint, upper);
      EXPECT_GE(*out.hint, std::min(in.policy.minVcpus, upper));
      EXPECT_GE(*out.hint, 1u);
      if (allocation.contention && *out.hint > std::min(in.policy.minVcpus, upper)) {
        // Rounding only: less than one guest core above the share.
        EXPECT_LT(*out.hint, out.share + in.threadsPerCore + 1e-9) << out.reason;
      }
    }
    // Shares never exceed the capacity (under contention they fill it exactly).
    EXPECT_LE(totalShare, std::max(capacity, allocation.totalDemand) + 1e-6);
    if (allocation.contention) {
      EXPECT_NEAR(totalShare, capacity, 1e-6);
    }
    // Weighted max-min fairness: a VM held below its demand has the highest
    // share per weight of all; nobody above it per unit of weight.
    if (allocation.contention) {
      for (std::size_t i = 0; i < vms.size(); ++i) {
        if (allocation.vms[i].share >= allocation.vms[i].demand - 1e-9) continue;
        const double level = allocation.vms[i].share / vms[i].weight;
        for (std::size_t j = 0; j < vms.size(); ++j) EXPECT_LE(allocation.vms[j].share / vms[j].weight, level + 1e-9);
      }
    }
  }
  EXPECT_GT(contended, 1000) << "the generator must exercise contention";
}

TEST(Allocation, RandomisedConvergenceAndStepResponse) {
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int round = 0; round < 500; ++round) {
    // No margin here: the step response of the delay alone.
    const auto delay = static_cast<unsigned>(random() % 5);
    const AllocationConfig config = delayTicks(delay, 0.0);
    std::vector<VmDemand> vms;
    const int count = 2 + static_cast<int>(random() % 5);
    for (int i = 0; i < count; ++i)
      vms.push_back(vm("vm" + std::to_string(i), 2 + static_cast<std::uint32_t>(random() % 8), 0));
    for (auto& d : vms) d.observedDemand = unit(random) * d.vcpus;
    const double capacity = 1 + unit(random) * 8;
    HintStates state;
    const auto settle = run(config, capacity, vms, static_cast<int>(delay) + 2, state);
    // Steady inputs: after convergence the hints stop changing.
    const auto steady = run(config, capacity, vms, 10, state);
    for (const auto& row : steady) EXPECT_EQ(row, steady.front());
    EXPECT_EQ(steady.front(), settle.back());

    // Step change: new demands. Folds land on the next tick; unfolds within the delay.
    for (auto& d : vms) d.observedDemand = unit(random) * d.vcpus;
    HintStates fresh;
    const auto target = run(delayTicks(0, 0.0), capacity, vms, 1, fresh).front();
    const auto after = run(config, capacity, vms, static_cast<int>(delay) + 1, state);
    for (std::size_t i = 0; i < vms.size(); ++i) {
      const auto before = steady.back()[i];
      if (*target[i] <= *before) {
        EXPECT_EQ(after[0][i], target[i]) << "fold within one tick";
      } else {
        const std::size_t by = std::max<std::size_t>(delay, 1) - 1;
        EXPECT_EQ(after[by][i], target[i]) << "unfold within the delay of " << delay << " ticks";
        for (std::size_t t = 0; t < by; ++t) EXPECT_EQ(after[t][i], before) << "no early unfold";
      }
    }
  }
}
