// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/fold_controller.h"

#include <gtest/gtest.h>

#include "fixture_tree.h"
#include "vcpufold/agent/platform.h"
#include "test_time.h"

using namespace vcpufold::agent;
using vcpufold::protocol::Control;
using vcpufold::protocol::CpuSet;
using vcpufold::protocol::Hint;
using vcpufold::protocol::HintPolicy;
using vcpufold::testing::FixtureTree;

namespace {

PlacementPlan planOf(const std::string& fixture) {
  FixtureTree tree(fixture);
  return PlacementPlan(*readTopology(tree.fs()));
}

Hint hint(std::uint64_t seq, std::uint32_t vcpus, HintPolicy policy = HintPolicy::Auto, std::uint32_t ttlMs = 3000) {
  return Hint{seq, vcpus, ttlMs, policy, "test"};
}

}  // namespace

TEST(FoldController, StartsUnfolded) {
  FoldController controller(planOf("lab-guest-4vcpu"), {});
  EXPECT_EQ(controller.current().cpus, CpuSet::range(0, 3));
  EXPECT_EQ(controller.control(), Control::None);
}

TEST(FoldController, HintAppliesAtOnceAndHoldsForItsLease) {
  FoldController controller(planOf("lab-guest-4vcpu"), {});
  const auto decision = controller.onHint(hint(1, 2), at(0));
  EXPECT_EQ(decision.cpus, (CpuSet{0, 1}));
  EXPECT_EQ(decision.control, Control::Host);
  // High steal does not move a guest under a valid lease.
  EXPECT_EQ(controller.onInterval(at(1000), 9000).cpus, (CpuSet{0, 1}));
  EXPECT_EQ(controller.onInterval(at(2999), 9000).control, Control::Host);
  EXPECT_EQ(controller.leaseSeq(), 1u);
}

TEST(FoldController, ExpiredLeaseHandsOverToTheFallbackFromWhereItIs) {
  FoldController controller(planOf("lab-guest-4vcpu"), {});
  controller.onHint(hint(1, 2), at(0));
  const auto decision = controller.onInterval(at(3000), 900);
  EXPECT_EQ(decision.control, Control::Fallback);
  EXPECT_EQ(decision.cpus, (CpuSet{0})) << "steps one core down from the hinted two";
  EXPECT_NE(decision.reason.find("expired"), std::string::npos) << decision.reason;
  EXPECT_FALSE(controller.leaseSeq());
  EXPECT_EQ(controller.onInterval(at(4000), 0).cpus, (CpuSet{0, 1}));
}

TEST(FoldController, RenewalKeepsTheLease) {
  FoldController controller(planOf("lab-guest-4vcpu"), {});
  for (std::int64_t t = 0; t < 10000; t += 1000) {
    controller.onHint(hint(static_cast<std::uint64_t>(t / 1000 + 1), 3), at(t));
    EXPECT_EQ(controller.onInterval(at(t + 500), 9000).control, Control::Host);
  }
}

TEST(FoldController, PolicyOffUnfoldsAndKeepsTheFallbackOff) {
  FoldController controller(planOf("lab-guest-4vcpu"), {});
  const auto decision = controller.onHint(hint(1, 1, HintPolicy::Off), at(0));
  EXPECT_EQ(decision.cpus, CpuSet::range(0, 3)) << "off means all CPUs whatever vcpus says";
  // After the lease: still unfolded, no steal law.
  const auto later = controller.onInterval(at(5000), 9000);
  EXPECT_EQ(later.cpus, CpuSet::range(0, 3));
  EXPECT_EQ(later.control, Control::None);
  EXPECT_TRUE(controller.fallbackDisabledByHost());
  // A hint with another policy re-enables it.
  controller.onHint(hint(2, 2, HintPolicy::Auto), at(6000));
  EXPECT_FALSE(controller.fallbackDisabledByHost());
  EXPECT_EQ(controller.onInterval(at(9000), 9000).control, Control::Fallback);
}

TEST(FoldController, FallbackNotAllowedStaysUnfolded) {
  FoldController controller(planOf("lab-guest-4vcpu"), {.fallbackAllowed = false, .law = {}});
  const auto decision = controller.onInterval(at(1000), 9000);
  EXPECT_EQ(decision.cpus, CpuSet::range(0, 3));
  EXPECT_EQ(decision.control, Control::None);
}

TEST(FoldController, UnknownStealHolds) {
  FoldController controller(planOf("lab-guest-4vcpu"), {});
  controller.onInterval(at(0), 9000);
  EXPECT_EQ(controller.onInterval(at(1000), std::nullopt).cpus, CpuSet::range(0, 2));
}

TEST(FoldController, HintSizesAreWholeCoresAndClamped) {
  FoldController controller(planOf("guest-smt2-numa2"), {});
  auto decision = controller.onHint(hint(1, 3), at(0));
  EXPECT_EQ(decision.cpus, (CpuSet{0, 1, 4, 5}));
  EXPECT_NE(decision.reason.find("whole cores"), std::string::npos) << decision.reason;
  EXPECT_EQ(controller.onHint(hint(2, 4096), at(0)).cpus, CpuSet::range(0, 7));
}

TEST(Platform, GuestHostAndDom0) {
  FixtureTree tree("lab-guest-4vcpu");
  const std::string cpuinfo = tree.read("/proc/cpuinfo");
  EXPECT_TRUE(classifyPlatform({cpuinfo, "", "", ""}).isVirtualMachine);
  std::string bareMetal = cpuinfo;
  for (std::size_t pos; (pos = bareMetal.find(" hypervisor")) != std::string::npos;) bareMetal.erase(pos, 11);
  EXPECT_FALSE(classifyPlatform({bareMetal, "", "", ""}).isVirtualMachine);
  EXPECT_TRUE(foldingRefusal(classifyPlatform({bareMetal, "", "", ""})).has_value());
  EXPECT_TRUE(classifyPlatform({cpuinfo, "control_d\n", "xen\n", ""}).isXenDom0);
  EXPECT_TRUE(foldingRefusal(classifyPlatform({cpuinfo, "control_d\n", "xen\n", ""})).has_value());
  EXPECT_FALSE(classifyPlatform({cpuinfo, "\n", "", ""}).isXenDom0);
  EXPECT_FALSE(foldingRefusal(classifyPlatform({cpuinfo, "", "", ""})).has_value());
  EXPECT_TRUE(detectPlatform(tree.fs()).isVirtualMachine);
}

TEST(Platform, AVmWithoutTheX86FlagIsKnownByTheKernelOrTheFirmware) {
  // arm64 and other guests: no "hypervisor" flag in /proc/cpuinfo.
  const std::string arm = "processor\t: 0\nFeatures\t: fp asimd evtstrm\n";
  EXPECT_FALSE(classifyPlatform({arm, "", "", ""}).isVirtualMachine);
  EXPECT_TRUE(classifyPlatform({arm, "", "", "QEMU\n"}).isVirtualMachine);
  EXPECT_TRUE(classifyPlatform({arm, "", "xen\n", ""}).isVirtualMachine);
  EXPECT_FALSE(classifyPlatform({arm, "", "", "Dell Inc.\n"}).isVirtualMachine);
  EXPECT_FALSE(classifyPlatform({arm, "", "\n", ""}).isVirtualMachine);
}

namespace {
PlacementPlan planWithCpu1Offline() {
  FixtureTree tree("lab-guest-4vcpu");
  tree.write("/sys/devices/system/cpu/online", "0,2-3\n");
  tree.remove("/sys/devices/system/cpu/cpu1/topology");
  return PlacementPlan(*readTopology(tree.fs()));
}
}  // namespace

TEST(FoldController, HotplugRePlacesTheLeaseOnWhatIsOnlineAndKeepsItsExpiry) {
  FoldController controller(planOf("lab-guest-4vcpu"), {});
  EXPECT_EQ(controller.onHint(hint(7, 2, HintPolicy::Auto, 1000), at(0)).cpus, (CpuSet{0, 1}));
  const FoldDecision moved = controller.onTopologyChange(planWithCpu1Offline());
  EXPECT_EQ(moved.cpus, (CpuSet{0, 2}));
  EXPECT_EQ(moved.control, vcpufold::protocol::Control::Host);
  EXPECT_EQ(controller.leaseSeq(), 7u);
  EXPECT_NE(moved.reason.find("CPU hotplug"), std::string::npos) << moved.reason;
  // The lease still ends when it would have: re-placing is not a renewal.
  EXPECT_EQ(controller.onInterval(at(999), 0).control, vcpufold::protocol::Control::Host);
  EXPECT_NE(controller.onInterval(at(1000), 0).control, vcpufold::protocol::Control::Host);
}

TEST(FoldController, HotplugKeepsTheFallbacksCoresWithinTheNewMaximum) {
  FoldController controller(planOf("lab-guest-4vcpu"), {});
  controller.onInterval(at(0), 9000);  // heavy steal: the fallback folds one core
  ASSERT_EQ(controller.control(), vcpufold::protocol::Control::Fallback);
  const FoldDecision moved = controller.onTopologyChange(planWithCpu1Offline());
  EXPECT_TRUE(moved.cpus.isSubsetOf(CpuSet{0, 2, 3}));
  EXPECT_EQ(moved.cpus.size(), 3u);
  const FoldDecision unfoldedNow = FoldController(planWithCpu1Offline(), {}).onTopologyChange(planOf("lab-guest-4vcpu"));
  EXPECT_EQ(unfoldedNow.cpus, CpuSet::range(0, 3)) << "unfolded stays unfolded, with the new CPU";
}
