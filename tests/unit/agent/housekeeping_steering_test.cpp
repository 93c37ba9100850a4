// SPDX-License-Identifier: GPL-2.0-or-later
// The housekeeping steering on trees captured from TCG guests booted with
// Debian's stock 6.1 and 6.12 cloud kernels (tests/fixtures/README.md): their
// real /proc/irq, workqueue mask and cgroup2 root. The cgroupfs side of the
// parked cgroup (files appearing on mkdir, rmdir ignoring them) is done by
// hand, as the kernel would.

#include "vcpufold/agent/housekeeping_steering.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "fixture_tree.h"
#include "vcpufold/agent/cgroup_cpuset_actuator.h"
#include "vcpufold/agent/steered_cpuset_actuator.h"
#include "vcpufold/protocol/cpulist.h"
#include "test_time.h"

using namespace vcpufold::agent;
using vcpufold::protocol::CpuSet;
using vcpufold::testing::FixtureTree;

namespace {

constexpr const char* kParked = "/sys/fs/cgroup/vcpufold.parked";
constexpr const char* kWorkqueueMask = "/sys/devices/virtual/workqueue/cpumask";
constexpr const char* kState = "/run/vcpufold/housekeeping-state.json";
const CpuSet kOnline = CpuSet::range(0, 3);

// Every IRQ's smp_affinity_list as the tree holds it now, without the
// newline the kernel adds when it prints one (a write of "0-3" reads back as
// "0-3\n" there, as in the captured files).
std::map<std::string, std::string> irqAffinities(const FixtureTree& tree) {
  std::map<std::string, std::string> affinities;
  for (const auto& irq : tree.fs().listDirectory("/proc/irq"))
    if (tree.fs().exists("/proc/irq/" + irq + "/smp_affinity_list")) {
      std::string text = tree.read("/proc/irq/" + irq + "/smp_affinity_list");
      if (!text.empty() && text.back() == '\n') text.pop_back();
      affinities[irq] = text;
    }
  return affinities;
}

// What the kernel does on mkdir of a cgroup with the cpuset controller on,
// and the root cgroup's CPUs once the partition the agent makes of it holds
// the rest (played beforehand: the tree cannot react to the agent's writes).
void kernelMakesParkedFiles(const FixtureTree& tree, const std::string& rootCpusOnceParked = "0") {
  tree.write(std::string(kParked) + "/cpuset.cpus", "\n");
  tree.write(std::string(kParked) + "/cpuset.cpus.partition", "member\n");
  tree.write(std::string(kParked) + "/cgroup.procs", "");
  tree.write("/sys/fs/cgroup/cpuset.cpus.effective", rootCpusOnceParked + "\n");
}
// rmdir of a cgroup ignores its files; a plain directory's does not. Its CPUs
// are the root cgroup's again.
void kernelDropsParkedFiles(const FixtureTree& tree) {
  for (const char* file : {"/cpuset.cpus", "/cpuset.cpus.partition", "/cgroup.procs"})
    tree.remove(std::string(kParked) + file);
  tree.write("/sys/fs/cgroup/cpuset.cpus.effective", "0-3\n");
}

class HousekeepingSteeringTest : public ::testing::TestWithParam<std::string> {};

}  // namespace

TEST(CpuMask, FormatsAndParsesAsTheKernelPrintsIt) {
  EXPECT_EQ(formatCpuMask(CpuSet{0}), "1");
  EXPECT_EQ(formatCpuMask(CpuSet::range(0, 3)), "f");
  EXPECT_EQ(formatCpuMask(CpuSet{1, 3}), "a");
  EXPECT_EQ(formatCpuMask(CpuSet::range(0, 35)), "f,ffffffff");
  EXPECT_EQ(formatCpuMask(CpuSet{32}), "1,00000000");
  EXPECT_EQ(*parseCpuMask("f\n"), CpuSet::range(0, 3));
  EXPECT_EQ(*parseCpuMask("00000000,0000000f\n"), CpuSet::range(0, 3));
  EXPECT_EQ(*parseCpuMask("1,00000001"), (CpuSet{0, 32}));
  EXPECT_EQ(*parseCpuMask("A"), (CpuSet{1, 3}));
  EXPECT_FALSE(parseCpuMask(""));
  EXPECT_FALSE(parseCpuMask("0-3")) << "a cpulist is not a mask";
  EXPECT_FALSE(parseCpuMask("1,2")) << "a word after a comma has 8 digits";
  EXPECT_FALSE(parseCpuMask("123456789")) << "no word is longer than 32 bits";
}

TEST(Irqbalance, IsFoundByItsCommandName) {
  EXPECT_TRUE(isIrqbalanceAmong({"systemd\n", "irqbalance\n"}));
  EXPECT_FALSE(isIrqbalanceAmong({"systemd\n", "irqbalance-ui\n", "sh\n"}));
  EXPECT_FALSE(isIrqbalanceAmong({}));
}

TEST_P(HousekeepingSteeringTest, SteersEverythingMovableAndPutsEveryValueBackExactly) {
  FixtureTree tree(GetParam());
  const auto irqsBefore = irqAffinities(tree);
  const std::string maskBefore = tree.read(kWorkqueueMask);
  ASSERT_GE(irqsBefore.size(), 3u) << "the captured guest has device IRQs";
  ASSERT_EQ(*parseCpuMask(maskBefore), kOnline) << "captured unfolded: " << maskBefore;

  KnobWriter knobs(tree.fs());
  HousekeepingSteering steering(knobs, "/sys/fs/cgroup");
  kernelMakesParkedFiles(tree);
  auto steered = steering.apply(CpuSet{0}, kOnline, at(1000));
  ASSERT_TRUE(steered) << steered.error().message;
  EXPECT_TRUE(steered->changed);
  EXPECT_NE(steered->detail.find("parked CPUs 1-3 (isolated partition vcpufold.parked)"), std::string::npos)
      << steered->detail;
  EXPECT_NE(steered->detail.find("unbound workqueues to CPUs 0"), std::string::npos) << steered->detail;
  EXPECT_EQ(tree.read(std::string(kParked) + "/cpuset.cpus"), "1-3");
  EXPECT_EQ(tree.read(std::string(kParked) + "/cpuset.cpus.partition"), "isolated");
  EXPECT_EQ(tree.read(kWorkqueueMask), "1");
  for (const auto& [irq, before] : irqAffinities(tree))
    EXPECT_EQ(before, "0") << "IRQ " << irq << " was " << irqsBefore.at(irq);
  ASSERT_TRUE(tree.fs().exists(kState)) << "every original recorded before it changed";

  // The next interval: the same set costs reads only.
  auto again = steering.apply(CpuSet{0}, kOnline, at(2000));
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_FALSE(again->changed) << again->detail;

  kernelDropsParkedFiles(tree);
  auto released = steering.release();
  ASSERT_TRUE(released) << released.error().message;
  EXPECT_TRUE(released->changed);
  EXPECT_EQ(irqAffinities(tree), irqsBefore) << "each IRQ's own value, not the online set";
  EXPECT_EQ(tree.read(kWorkqueueMask), maskBefore.substr(0, maskBefore.find('\n')));
  EXPECT_FALSE(tree.fs().exists(kParked));
  EXPECT_FALSE(tree.fs().exists(kState));
  auto idle = steering.release();
  ASSERT_TRUE(idle);
  EXPECT_FALSE(idle->changed) << "nothing steered, nothing to do";
}

TEST_P(HousekeepingSteeringTest, ACrashedAgentsStateIsUndoneFromTheFileAlone) {
  FixtureTree tree(GetParam());
  const auto irqsBefore = irqAffinities(tree);
  const std::string maskBefore = tree.read(kWorkqueueMask);
  {
    KnobWriter knobs(tree.fs());
    HousekeepingSteering steering(knobs, "/sys/fs/cgroup");
    kernelMakesParkedFiles(tree, "0-1");
    ASSERT_TRUE(steering.apply(CpuSet{0, 1}, kOnline, at(1000)));
    EXPECT_EQ(tree.read(std::string(kParked) + "/cpuset.cpus"), "2-3");
    // The agent dies here: nothing is released.
  }
  ASSERT_TRUE(HousekeepingSteering::hasLeftovers(tree.fs()));
  kernelDropsParkedFiles(tree);
  auto restored = HousekeepingSteering::restoreFromState(tree.fs());
  ASSERT_TRUE(restored) << restored.error().message;
  EXPECT_EQ(irqAffinities(tree), irqsBefore);
  EXPECT_EQ(tree.read(kWorkqueueMask), maskBefore.substr(0, maskBefore.find('\n')));
  EXPECT_FALSE(tree.fs().exists(kParked));
  EXPECT_FALSE(HousekeepingSteering::hasLeftovers(tree.fs()));
}

TEST_P(HousekeepingSteeringTest, AnIrqTheKernelRefusesIsLeftAloneAndNeverRestored) {
  FixtureTree tree(GetParam());
  const auto irqsBefore = irqAffinities(tree);
  // A kernel-managed IRQ reads as any other and refuses every write (EIO).
  // Played by the live kernel's read-only /sys/devices/system/cpu/possible
  // (kernfs refuses a write without a handler, even to root).
  const std::string refused = irqsBefore.begin()->first;
  const std::string refusedPath = "/proc/irq/" + refused + "/smp_affinity_list";
  tree.remove(refusedPath);
  std::filesystem::create_symlink("/sys/devices/system/cpu/possible", tree.fs().resolve(refusedPath));
  const std::string refusedBefore = tree.read(refusedPath);
  KnobWriter knobs(tree.fs());
  HousekeepingSteering steering(knobs, "/sys/fs/cgroup");
  kernelMakesParkedFiles(tree);
  auto steered = steering.apply(CpuSet{0}, kOnline, at(1000));
  ASSERT_TRUE(steered) << "a refused IRQ does not stop the rest: " << steered.error().message;
  EXPECT_NE(steered->detail.find("IRQs left as they are, refused: " + refused + " ("), std::string::npos)
      << steered->detail;
  auto again = steering.apply(CpuSet{0}, kOnline, at(2000));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->detail.find("refused"), std::string::npos) << "said once: " << again->detail;
  for (const auto& [irq, now] : irqAffinities(tree)) {
    if (irq == refused) continue;
    EXPECT_EQ(now, "0") << "IRQ " << irq;
  }
  EXPECT_EQ(tree.read(kState).find("\"" + refused + "\""), std::string::npos) << tree.read(kState);
  kernelDropsParkedFiles(tree);
  ASSERT_TRUE(steering.release()) << "nothing of the refused IRQ to put back";
  EXPECT_EQ(tree.read(refusedPath), refusedBefore);
}

TEST_P(HousekeepingSteeringTest, WhereIrqbalanceRunsItKeepsTheIrqsAndTheRestIsSteered) {
  FixtureTree tree(GetParam());
  const auto irqsBefore = irqAffinities(tree);
  tree.write("/proc/812/comm", "irqbalance\n");
  KnobWriter knobs(tree.fs());
  HousekeepingSteering steering(knobs, "/sys/fs/cgroup");
  kernelMakesParkedFiles(tree);
  auto steered = steering.apply(CpuSet{0}, kOnline, at(1000));
  ASSERT_TRUE(steered) << steered.error().message;
  EXPECT_TRUE(steering.irqbalanceRuns());
  EXPECT_NE(steered->detail.find("irqbalance runs: IRQ affinity is left to it"), std::string::npos)
      << steered->detail;
  EXPECT_EQ(irqAffinities(tree), irqsBefore) << "not fought over";
  EXPECT_EQ(tree.read(kWorkqueueMask), "1");
  EXPECT_EQ(tree.read(std::string(kParked) + "/cpuset.cpus.partition"), "isolated");
  // Said once, not every interval.
  auto again = steering.apply(CpuSet{0}, kOnline, at(2000));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->detail.find("irqbalance"), std::string::npos) << again->detail;

  // irqbalance goes: looked for again after the check period, and the IRQs follow.
  tree.remove("/proc/812/comm");
  auto later = steering.apply(CpuSet{0}, kOnline, at(2000) + HousekeepingSteering::kIrqbalanceCheck);
  ASSERT_TRUE(later);
  EXPECT_NE(later->detail.find("irqbalance stopped"), std::string::npos) << later->detail;
  for (const auto& [irq, now] : irqAffinities(tree)) EXPECT_EQ(now, "0") << "IRQ " << irq;
}

TEST_P(HousekeepingSteeringTest, APartitionTheKernelWillNotMakeIsSaidOnceAndTheRestIsSteered) {
  FixtureTree tree(GetParam());
  KnobWriter knobs(tree.fs());
  HousekeepingSteering steering(knobs, "/sys/fs/cgroup");
  // The kernel takes the write but reports the partition invalid (another
  // cgroup holds one of the CPUs exclusively).
  kernelMakesParkedFiles(tree);
  tree.remove(std::string(kParked) + "/cpuset.cpus.partition");
  tree.write(std::string(kParked) + "/cpuset.cpus.partition/refuses", "");
  auto steered = steering.apply(CpuSet{0}, kOnline, at(1000));
  ASSERT_TRUE(steered) << steered.error().message;
  EXPECT_NE(steered->detail.find("CPUs 1-3 not parked (the kernel would not make them a partition"),
            std::string::npos)
      << steered->detail;
  EXPECT_EQ(tree.read(kWorkqueueMask), "1");
  auto again = steering.apply(CpuSet{0}, kOnline, at(2000));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->detail.find("not parked"), std::string::npos) << "said once: " << again->detail;
}

TEST_P(HousekeepingSteeringTest, NoTaskGoesIntoTheParkedPartitionTheAgentIncluded) {
  // The agent stays where it is (the root cgroup without systemd, which the
  // partition confines to the preferred CPUs): the parked vCPUs stay idle.
  FixtureTree tree(GetParam());
  tree.write("/sys/fs/cgroup/cgroup.procs", "4242\n");
  KnobWriter knobs(tree.fs());
  HousekeepingSteering steering(knobs, "/sys/fs/cgroup");
  kernelMakesParkedFiles(tree);
  auto steered = steering.apply(CpuSet{0}, kOnline, at(1000));
  ASSERT_TRUE(steered) << steered.error().message;
  EXPECT_NE(steered->detail.find("parked CPUs 1-3 (isolated partition vcpufold.parked); "), std::string::npos)
      << steered->detail;
  EXPECT_EQ(tree.read(std::string(kParked) + "/cgroup.procs"), "");
  EXPECT_EQ(tree.read("/sys/fs/cgroup/cgroup.procs"), "4242\n");
}

// 6.1 gives a removed partition's CPUs back only once the cgroup has gone,
// after rmdir returns: a partition made meanwhile (a fold right after an
// unfold) is valid, yet the root cgroup keeps some of its CPUs and its kernel
// threads run there (seen in a TCG guest: parked 1-3, root cgroup 0,3, the RCU
// and kcompactd threads on 0,3). The agent takes them again, a bounded number
// of times for one set.
TEST_P(HousekeepingSteeringTest, ParkedCpusTheRootCgroupStillShowsAreTakenAgain) {
  FixtureTree tree(GetParam());
  KnobWriter knobs(tree.fs());
  HousekeepingSteering steering(knobs, "/sys/fs/cgroup");
  kernelMakesParkedFiles(tree, "0,3");
  auto steered = steering.apply(CpuSet{0}, kOnline, at(1000));
  ASSERT_TRUE(steered) << steered.error().message;
  EXPECT_NE(steered->detail.find("parked CPUs 1-3 (isolated partition vcpufold.parked); the root cgroup still has "
                                 "CPUs 3 (a partition removed just before has not gone yet): taken again at the "
                                 "next interval"),
            std::string::npos)
      << steered->detail;
  EXPECT_EQ(tree.read(std::string(kParked) + "/cpuset.cpus.partition"), "isolated") << "a partition again";
  for (int interval = 2; interval < HousekeepingSteering::kRetakesPerSet; ++interval) {
    auto again = steering.apply(CpuSet{0}, kOnline, at(1000 * interval));
    ASSERT_TRUE(again) << again.error().message;
    EXPECT_NE(again->detail.find("taken again at the next interval"), std::string::npos) << again->detail;
  }
  auto last = steering.apply(CpuSet{0}, kOnline, at(10'000));
  ASSERT_TRUE(last);
  EXPECT_NE(last->detail.find("the root cgroup keeps CPUs 3 although they are parked; left so"), std::string::npos)
      << last->detail;
  auto quiet = steering.apply(CpuSet{0}, kOnline, at(11'000));
  ASSERT_TRUE(quiet);
  EXPECT_FALSE(quiet->changed) << "said once: " << quiet->detail;

  // The kernel lets them go: nothing more to do, and another set starts counting afresh.
  tree.write("/sys/fs/cgroup/cpuset.cpus.effective", "0\n");
  auto settled = steering.apply(CpuSet{0}, kOnline, at(12'000));
  ASSERT_TRUE(settled);
  EXPECT_FALSE(settled->changed) << settled->detail;
  tree.write("/sys/fs/cgroup/cpuset.cpus.effective", "0-1,3\n");
  auto other = steering.apply(CpuSet{0, 1}, kOnline, at(13'000));
  ASSERT_TRUE(other) << other.error().message;
  EXPECT_NE(other->detail.find("parked CPUs 2-3"), std::string::npos) << other->detail;
  EXPECT_NE(other->detail.find("the root cgroup still has CPUs 3"), std::string::npos) << other->detail;
}

TEST_P(HousekeepingSteeringTest, TheWholeOnlineSetIsARelease) {
  FixtureTree tree(GetParam());
  const auto irqsBefore = irqAffinities(tree);
  KnobWriter knobs(tree.fs());
  HousekeepingSteering steering(knobs, "/sys/fs/cgroup");
  kernelMakesParkedFiles(tree);
  ASSERT_TRUE(steering.apply(CpuSet{0}, kOnline, at(1000)));
  kernelDropsParkedFiles(tree);
  auto unfolded = steering.apply(kOnline, kOnline, at(2000));
  ASSERT_TRUE(unfolded) << unfolded.error().message;
  EXPECT_EQ(irqAffinities(tree), irqsBefore);
  EXPECT_FALSE(tree.fs().exists(kParked));
  EXPECT_FALSE(tree.fs().exists(kState));
}

TEST_P(HousekeepingSteeringTest, TheSteeredActuatorUnparksBeforeItWidensTheCgroups) {
  FixtureTree tree(GetParam());
  const auto irqsBefore = irqAffinities(tree);
  KnobWriter knobs(tree.fs());
  auto cpuset = std::make_unique<CgroupCpusetActuator>(knobs, "/sys/fs/cgroup", false);
  SteeredCpusetActuator actuator(std::move(cpuset), knobs, "/sys/fs/cgroup");
  kernelMakesParkedFiles(tree);
  auto folded = actuator.apply(CpuSet{0}, at(1000));
  ASSERT_TRUE(folded) << folded.error().message;
  // The fold holds at once; the housekeeping follows after the answer.
  EXPECT_EQ(tree.read("/sys/fs/cgroup/system.slice/cpuset.cpus"), "0");
  EXPECT_EQ(tree.read(std::string(kParked) + "/cpuset.cpus"), "\n") << "not parked before the answer";
  ASSERT_TRUE(actuator.hasDeferredWork());
  auto steered = actuator.doDeferredWork(at(1010));
  ASSERT_TRUE(steered) << steered.error().message;
  EXPECT_FALSE(actuator.hasDeferredWork());
  EXPECT_EQ(tree.read(std::string(kParked) + "/cpuset.cpus"), "1-3");
  EXPECT_NE(steered->detail.find("parked CPUs 1-3"), std::string::npos) << steered->detail;
  // The same fold again (every interval) steers inline: nothing left to defer.
  auto again = actuator.apply(CpuSet{0}, at(2000));
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_FALSE(actuator.hasDeferredWork());

  // 1 -> 2 CPUs: the old partition (1-3) would hold CPU 1 against
  // system.slice's new set, so it gives its CPUs back first by becoming a
  // member, and after the answer it is a partition of 2-3, changed in place
  // (never removed and made anew: see ParkedCpusTheRootCgroupStillShows...).
  auto wider = actuator.apply(CpuSet{0, 1}, at(2000));
  ASSERT_TRUE(wider) << wider.error().message;
  EXPECT_EQ(tree.read("/sys/fs/cgroup/system.slice/cpuset.cpus"), "0-1");
  EXPECT_EQ(tree.read(std::string(kParked) + "/cpuset.cpus.partition"), "member") << "not a partition while widened";
  tree.write("/sys/fs/cgroup/cpuset.cpus.effective", "0-1\n");
  wider = actuator.doDeferredWork(at(2010));
  ASSERT_TRUE(wider) << wider.error().message;
  EXPECT_NE(wider->detail.find("parked CPUs 2-3 (isolated partition vcpufold.parked); "), std::string::npos)
      << wider->detail;
  EXPECT_EQ(tree.read(std::string(kParked) + "/cpuset.cpus"), "2-3");
  EXPECT_EQ(tree.read(std::string(kParked) + "/cpuset.cpus.partition"), "isolated");
  kernelDropsParkedFiles(tree);

  auto restored = actuator.restore();
  ASSERT_TRUE(restored) << restored.error().message;
  EXPECT_EQ(irqAffinities(tree), irqsBefore);
  EXPECT_FALSE(HousekeepingSteering::hasLeftovers(tree.fs()));
  EXPECT_FALSE(CgroupCpusetActuator::hasLeftovers(tree.fs()));
}

INSTANTIATE_TEST_SUITE_P(StockKernels, HousekeepingSteeringTest,
                         ::testing::Values("guest-stock-6.1-housekeeping", "guest-stock-6.12-housekeeping"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           return param.index == 0 ? "Debian6_1" : "Debian6_12";
                         });
