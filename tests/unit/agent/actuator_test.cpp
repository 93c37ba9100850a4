// SPDX-License-Identifier: GPL-2.0-or-later
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "fixture_tree.h"
#include "vcpufold/agent/cgroup_cpuset_actuator.h"
#include "vcpufold/agent/kernel_actuator.h"
#include "test_time.h"

using namespace vcpufold::agent;
using vcpufold::protocol::CpuSet;
using vcpufold::testing::FixtureTree;
using vcpufold::testing::fixturesDirectory;

namespace {

std::string hostStat(const std::string& name) {
  std::ifstream in(fixturesDirectory() / "host-proc-pid-stat" / name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

constexpr const char* kCgroup = "/sys/fs/cgroup";

}  // namespace

TEST(KnobWriter, WritesOnlyOnChange) {
  FixtureTree tree("lab-guest-4vcpu");
  KnobWriter knobs(tree.fs());
  tree.write("/sys/fs/cgroup/system.slice/cpuset.cpus", "0-1\n");
  EXPECT_EQ(*knobs.write("/sys/fs/cgroup/system.slice/cpuset.cpus", "0,1", at(0), KnobValueKind::CpuList),
            KnobOutcome::Unchanged)
      << "same set, other spelling";
  EXPECT_EQ(tree.read("/sys/fs/cgroup/system.slice/cpuset.cpus"), "0-1\n") << "not rewritten";
  EXPECT_EQ(*knobs.write("/sys/fs/cgroup/system.slice/cpuset.cpus", "0", at(0), KnobValueKind::CpuList),
            KnobOutcome::Written);
  EXPECT_EQ(tree.read("/sys/fs/cgroup/system.slice/cpuset.cpus"), "0");
}

TEST(KnobWriter, QuarantinesAKnobThatKeepsFailing) {
  FixtureTree tree("lab-guest-4vcpu");
  // A directory where the knob should be: every write fails.
  tree.remove("/sys/fs/cgroup/system.slice/cpuset.cpus");
  tree.write("/sys/fs/cgroup/system.slice/cpuset.cpus/x", "");
  KnobWriter knobs(tree.fs(), {.failuresBeforeQuarantine = 3, .firstQuarantine = std::chrono::milliseconds(1000), .maxQuarantine = std::chrono::milliseconds(4000)});
  const std::string knob = "/sys/fs/cgroup/system.slice/cpuset.cpus";
  EXPECT_FALSE(knobs.write(knob, "0", at(0)));
  EXPECT_FALSE(knobs.write(knob, "0", at(1)));
  auto third = knobs.write(knob, "0", at(2));
  ASSERT_FALSE(third);
  EXPECT_NE(third.error().message.find("quarantined"), std::string::npos) << third.error().message;
  EXPECT_EQ(*knobs.write(knob, "0", at(500)), KnobOutcome::Quarantined) << "left alone, not retried";
  EXPECT_TRUE(knobs.isQuarantined(knob, at(1001)));
  EXPECT_FALSE(knobs.isQuarantined(knob, at(1002)));
  // Relapse doubles the period.
  for (int i = 0; i < 3; ++i) (void)knobs.write(knob, "0", at(1002 + i));
  EXPECT_TRUE(knobs.isQuarantined(knob, at(1004 + 1999)));
  // Healed: works again once the quarantine is over.
  tree.remove(knob);
  tree.write(knob, "");
  EXPECT_EQ(*knobs.write(knob, "0", at(10'000)), KnobOutcome::Written);
}

TEST(KernelActuator, DetectsTheWritableFileOnly) {
  FixtureTree tree("lab-guest-4vcpu");
  EXPECT_FALSE(KernelActuator::isAvailable(tree.fs())) << "stock kernel: no file";
  tree.write("/sys/devices/system/cpu/preferred", "0-3\n");
  std::filesystem::permissions(tree.fs().resolve("/sys/devices/system/cpu/preferred"),
                               std::filesystem::perms::owner_read | std::filesystem::perms::group_read |
                                   std::filesystem::perms::others_read);
  EXPECT_FALSE(KernelActuator::isAvailable(tree.fs())) << "upstream's read-only file";
  std::filesystem::permissions(tree.fs().resolve("/sys/devices/system/cpu/preferred"),
                               std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
  EXPECT_TRUE(KernelActuator::isAvailable(tree.fs()));
}

TEST(KernelActuator, WritesTheMaskAndRestoresWithAnEmptyLine) {
  FixtureTree tree("lab-guest-4vcpu");
  tree.write("/sys/devices/system/cpu/preferred", "0-3\n");
  KnobWriter knobs(tree.fs());
  KernelActuator actuator(knobs);
  auto applied = actuator.apply(CpuSet{0, 1}, at(0));
  ASSERT_TRUE(applied) << applied.error().message;
  EXPECT_TRUE(applied->changed);
  EXPECT_EQ(tree.read("/sys/devices/system/cpu/preferred"), "0-1\n");
  tree.write("/sys/devices/system/cpu/preferred", "0-1\n");
  EXPECT_FALSE(actuator.apply(CpuSet{0, 1}, at(1))->changed) << "read-compare-write";
  ASSERT_TRUE(actuator.restore());
  EXPECT_EQ(tree.read("/sys/devices/system/cpu/preferred"), "\n");
}

TEST(CgroupCpuset, FindsTheCgroup2Root) {
  FixtureTree tree("lab-guest-4vcpu");
  auto root = CgroupCpusetActuator::findUsableRoot(tree.fs());
  ASSERT_TRUE(root) << root.error().message;
  EXPECT_EQ(*root, kCgroup);
  tree.write("/sys/fs/cgroup/cgroup.controllers", "memory pids\n");
  EXPECT_NE(CgroupCpusetActuator::findUsableRoot(tree.fs()).error().message.find("cpuset"), std::string::npos);
  tree.write("/proc/self/mountinfo", "22 1 0:20 / /proc rw,relatime - proc proc rw\n");
  EXPECT_FALSE(CgroupCpusetActuator::findUsableRoot(tree.fs()));
  EXPECT_EQ(findCgroup2Mount("35 24 0:30 / /sys/fs/cgroup/unified rw,nosuid shared:10 - cgroup2 cgroup2 rw\n"),
            "/sys/fs/cgroup/unified")
      << "optional fields before the separator";
}

TEST(CgroupCpuset, KernelThreadsFromRealStatFiles) {
  EXPECT_TRUE(isKernelThread(hostStat("kthreadd")));
  EXPECT_TRUE(isKernelThread(hostStat("ksoftirqd")));
  EXPECT_FALSE(isKernelThread(hostStat("init")));
  EXPECT_FALSE(isKernelThread(hostStat("user-odd-comm"))) << "comm with ') ' inside";
  EXPECT_FALSE(isKernelThread("garbage"));
}

TEST(CgroupCpuset, FoldsTopLevelCgroupsAndRestoresExactly) {
  FixtureTree tree("lab-guest-4vcpu");
  tree.write("/sys/fs/cgroup/cgroup.subtree_control", "\n");  // cpuset not enabled yet
  tree.write("/sys/fs/cgroup/system.slice/cpuset.cpus", "\n");
  tree.write("/sys/fs/cgroup/pinned.slice/cpuset.cpus", "3\n");  // restricts itself
  // An administrator's own set, naming every CPU: theirs too. (Taken, it
  // would come back empty on release, not as they set it.)
  tree.write("/sys/fs/cgroup/wide.slice/cpuset.cpus", "0-7\n");
  const std::string self = std::to_string(::getpid());
  tree.write("/sys/fs/cgroup/cgroup.procs", "1\n2\n77\n" + self + "\n");
  tree.write("/proc/" + self + "/stat", hostStat("user-odd-comm"));
  tree.write("/proc/1/stat", hostStat("init"));
  tree.write("/proc/2/stat", hostStat("kthreadd"));
  tree.write("/proc/77/stat", hostStat("user-odd-comm"));
  KnobWriter knobs(tree.fs());
  CgroupCpusetActuator actuator(knobs, kCgroup, true);

  auto first = actuator.apply(CpuSet{0, 1}, at(0));
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(tree.read("/sys/fs/cgroup/cgroup.subtree_control"), "+cpuset");
  EXPECT_EQ(tree.read("/sys/fs/cgroup/system.slice/cpuset.cpus"), "0-1");
  EXPECT_EQ(tree.read("/sys/fs/cgroup/pinned.slice/cpuset.cpus"), "3\n") << "left alone";
  EXPECT_EQ(tree.read("/sys/fs/cgroup/wide.slice/cpuset.cpus"), "0-7\n") << "left alone";
  EXPECT_NE(first->detail.find("pinned.slice"), std::string::npos) << first->detail;
  EXPECT_NE(first->detail.find("left wide.slice alone (its cpuset.cpus is set elsewhere)"), std::string::npos)
      << first->detail;
  EXPECT_TRUE(tree.fs().isDirectory("/sys/fs/cgroup/vcpufold.fold"));
  EXPECT_TRUE(tree.fs().exists("/run/vcpufold/cpuset-state.json")) << "recorded before acting";

  // The kernel populates a new cgroup with its files; then tasks move in.
  tree.write("/sys/fs/cgroup/vcpufold.fold/cgroup.procs", "");
  tree.write("/sys/fs/cgroup/vcpufold.fold/cpuset.cpus", "\n");
  auto second = actuator.apply(CpuSet{0, 1}, at(1000));
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(tree.read("/sys/fs/cgroup/vcpufold.fold/cgroup.procs"), "") << "tasks move after the answer";
  ASSERT_TRUE(actuator.hasDeferredWork());
  ASSERT_TRUE(actuator.doDeferredWork(at(1001)));
  EXPECT_EQ(tree.read("/sys/fs/cgroup/vcpufold.fold/cgroup.procs"), "77") << "not PID 1, not kthreadd, not the agent";
  EXPECT_EQ(tree.read("/sys/fs/cgroup/vcpufold.fold/cpuset.cpus"), "0-1");

  // Unchanged input writes nothing.
  tree.write("/sys/fs/cgroup/cgroup.procs", "1\n2\n");
  tree.write("/sys/fs/cgroup/cgroup.subtree_control", "cpuset\n");
  auto third = actuator.apply(CpuSet{0, 1}, at(2000));
  ASSERT_TRUE(third);
  EXPECT_FALSE(third->changed) << third->detail;

  // Restore from a fresh process (as --restore after a crash would).
  tree.write("/sys/fs/cgroup/vcpufold.fold/cgroup.procs", "77\n");
  tree.remove("/sys/fs/cgroup/vcpufold.fold/cpuset.cpus");  // rmdir ignores a cgroup's own files
  tree.remove("/sys/fs/cgroup/vcpufold.fold/cgroup.procs");
  ASSERT_TRUE(CgroupCpusetActuator::restoreFromState(tree.fs()));
  EXPECT_EQ(tree.read("/sys/fs/cgroup/system.slice/cpuset.cpus"), "\n") << "back to inheriting all CPUs";
  EXPECT_EQ(tree.read("/sys/fs/cgroup/pinned.slice/cpuset.cpus"), "3\n");
  EXPECT_EQ(tree.read("/sys/fs/cgroup/wide.slice/cpuset.cpus"), "0-7\n") << "what it found, not all CPUs";
  EXPECT_FALSE(tree.fs().exists("/sys/fs/cgroup/vcpufold.fold"));
  EXPECT_EQ(tree.read("/sys/fs/cgroup/cgroup.subtree_control"), "-cpuset") << "we enabled it, we disable it";
  EXPECT_FALSE(tree.fs().exists("/run/vcpufold/cpuset-state.json"));
}

// The kernel will not empty cpuset.cpus of a cgroup that has tasks, so a
// restore writes every CPU there and records it: the next fold's own, while
// it still holds that value; someone else's once it holds another.
TEST(CgroupCpuset, ACgroupHandedBackAtEveryCpuIsFoldedAgainWhileItStillHoldsThatValue) {
  FixtureTree tree("lab-guest-4vcpu");
  tree.write("/sys/fs/cgroup/cgroup.subtree_control", "cpuset\n");
  tree.write("/sys/fs/cgroup/cgroup.procs", "1\n");
  tree.write("/sys/fs/cgroup/held.slice/cpuset.cpus", "0-3\n");     // as the restore left it
  tree.write("/sys/fs/cgroup/changed.slice/cpuset.cpus", "1-2\n");  // someone set it since
  tree.write("/sys/fs/cgroup/admin.slice/cpuset.cpus", "0-3\n");    // never ours: not in the record
  tree.write("/run/vcpufold/cpuset-handed-back.json",
             R"({"cgroup_root":"/sys/fs/cgroup","cgroups":{"held.slice":"0-3","changed.slice":"0-3"}})"
             "\n");
  KnobWriter knobs(tree.fs());
  CgroupCpusetActuator actuator(knobs, kCgroup, false);

  auto folded = actuator.apply(CpuSet{0, 1}, at(0));
  ASSERT_TRUE(folded) << folded.error().message;
  EXPECT_EQ(tree.read("/sys/fs/cgroup/held.slice/cpuset.cpus"), "0-1") << folded->detail;
  EXPECT_EQ(tree.read("/sys/fs/cgroup/changed.slice/cpuset.cpus"), "1-2\n") << "its value changed: someone's";
  EXPECT_EQ(tree.read("/sys/fs/cgroup/admin.slice/cpuset.cpus"), "0-3\n") << "every CPU, but not written by us";
  EXPECT_NE(folded->detail.find("left changed.slice alone"), std::string::npos) << folded->detail;
  EXPECT_NE(folded->detail.find("left admin.slice alone"), std::string::npos) << folded->detail;
  EXPECT_FALSE(tree.fs().exists("/run/vcpufold/cpuset-handed-back.json"))
      << "both entries consumed: held.slice is in the state file now, changed.slice is forgotten";
  EXPECT_NE(tree.read("/run/vcpufold/cpuset-state.json").find("held.slice"), std::string::npos);

  // Released: emptied (this tree lets it), so nothing is recorded as handed back.
  auto released = actuator.release(at(1));
  ASSERT_TRUE(released) << released.error().message;
  EXPECT_EQ(tree.read("/sys/fs/cgroup/held.slice/cpuset.cpus"), "\n");
  EXPECT_FALSE(tree.fs().exists("/run/vcpufold/cpuset-handed-back.json"));
  // And changed.slice stays someone else's on the next fold, as any cgroup whose value was set elsewhere.
  ASSERT_TRUE(actuator.apply(CpuSet{0}, at(2)));
  EXPECT_EQ(tree.read("/sys/fs/cgroup/held.slice/cpuset.cpus"), "0");
  EXPECT_EQ(tree.read("/sys/fs/cgroup/changed.slice/cpuset.cpus"), "1-2\n");
}

TEST(CgroupCpuset, AHandedBackRecordOfAnotherRootOrUnreadableMakesNothingOurs) {
  for (const std::string& record :
       {std::string(R"({"cgroup_root":"/elsewhere","cgroups":{"held.slice":"0-3"}})"), std::string("{not json")}) {
    FixtureTree tree("lab-guest-4vcpu");
    tree.write("/sys/fs/cgroup/cgroup.subtree_control", "cpuset\n");
    tree.write("/sys/fs/cgroup/cgroup.procs", "1\n");
    tree.write("/sys/fs/cgroup/held.slice/cpuset.cpus", "0-3\n");
    tree.write("/run/vcpufold/cpuset-handed-back.json", record + "\n");
    KnobWriter knobs(tree.fs());
    CgroupCpusetActuator actuator(knobs, kCgroup, false);
    auto folded = actuator.apply(CpuSet{0, 1}, at(0));
    ASSERT_TRUE(folded) << folded.error().message;
    EXPECT_EQ(tree.read("/sys/fs/cgroup/held.slice/cpuset.cpus"), "0-3\n") << record;
    EXPECT_NE(folded->detail.find("left held.slice alone"), std::string::npos) << folded->detail;
  }
}

TEST(CgroupCpuset, RootTasksFollowASliceAtATimeAfterTheCgroupsHoldTheFold) {
  // On a loaded guest each move into a cgroup waits for the kernel (up to two
  // seconds were seen): apply(), which runs before every answer, restricts the
  // cgroups at once and leaves every move as deferred work.
  FixtureTree tree("lab-guest-4vcpu");
  tree.write("/sys/fs/cgroup/system.slice/cpuset.cpus", "\n");
  tree.write("/sys/fs/cgroup/vcpufold.fold/cgroup.procs", "");  // the kernel's files of the cgroup
  tree.write("/sys/fs/cgroup/vcpufold.fold/cpuset.cpus", "\n");
  for (const char* pid : {"77", "78", "79"}) tree.write(std::string("/proc/") + pid + "/stat", hostStat("user-odd-comm"));
  tree.write("/proc/1/stat", hostStat("init"));
  tree.write("/sys/fs/cgroup/cgroup.procs", "1\n77\n78\n79\n");
  KnobWriter knobs(tree.fs());
  CgroupCpusetActuator actuator(knobs, kCgroup, true, std::chrono::milliseconds(0));  // a slice of no time: one task a pass

  auto folded = actuator.apply(CpuSet{0}, at(0));
  ASSERT_TRUE(folded) << folded.error().message;
  EXPECT_EQ(tree.read("/sys/fs/cgroup/system.slice/cpuset.cpus"), "0");
  EXPECT_EQ(tree.read("/sys/fs/cgroup/vcpufold.fold/cpuset.cpus"), "0") << "restricted before any task moves in";
  EXPECT_EQ(tree.read("/sys/fs/cgroup/vcpufold.fold/cgroup.procs"), "") << "no move before the answer";
  EXPECT_EQ(folded->detail.find("moved"), std::string::npos) << folded->detail;
  ASSERT_TRUE(actuator.hasDeferredWork());
  auto first = actuator.doDeferredWork(at(10));
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(tree.read("/sys/fs/cgroup/vcpufold.fold/cgroup.procs"), "77");
  EXPECT_NE(first->detail.find("moved 1 tasks into vcpufold.fold (more follow"), std::string::npos) << first->detail;
  ASSERT_TRUE(actuator.hasDeferredWork());
  tree.write("/sys/fs/cgroup/cgroup.procs", "1\n78\n79\n");

  // The kernel took 77 out of the root; the next slices move the others.
  auto more = actuator.doDeferredWork(at(50));
  ASSERT_TRUE(more) << more.error().message;
  EXPECT_EQ(tree.read("/sys/fs/cgroup/vcpufold.fold/cgroup.procs"), "78");
  EXPECT_TRUE(actuator.hasDeferredWork());
  tree.write("/sys/fs/cgroup/cgroup.procs", "1\n79\n");
  more = actuator.doDeferredWork(at(100));
  ASSERT_TRUE(more) << more.error().message;
  EXPECT_EQ(tree.read("/sys/fs/cgroup/vcpufold.fold/cgroup.procs"), "79");
  EXPECT_EQ(more->detail, "moved 1 tasks into vcpufold.fold");
  EXPECT_FALSE(actuator.hasDeferredWork()) << "PID 1 stays; nothing left";
  // The same fold again (every hint and interval) with the root cgroup as the
  // last pass left it: no pass, which would read every task's /proc/PID/stat.
  ASSERT_TRUE(actuator.apply(CpuSet{0}, at(120)));
  EXPECT_FALSE(actuator.hasDeferredWork()) << "nothing came into the root cgroup";

  // An unfold drops what was still to move.
  tree.write("/sys/fs/cgroup/cgroup.procs", "1\n80\n81\n");
  tree.write("/proc/80/stat", hostStat("user-odd-comm"));
  tree.write("/proc/81/stat", hostStat("user-odd-comm"));
  ASSERT_TRUE(actuator.apply(CpuSet{0}, at(150)));
  ASSERT_TRUE(actuator.hasDeferredWork());
  tree.write("/sys/fs/cgroup/vcpufold.fold/cgroup.procs", "");
  tree.remove("/sys/fs/cgroup/vcpufold.fold/cpuset.cpus");
  ASSERT_TRUE(actuator.release(at(200)));
  EXPECT_FALSE(actuator.hasDeferredWork());
}

TEST(CgroupCpuset, PrepareEnablesTheControllerAheadAndOnlyStopOrRestoreGivesItBack) {
  // Enabling the controller moves every task of the guest: done when the agent
  // starts, not inside the first fold's answer; an unfold keeps it for the next.
  FixtureTree tree("lab-guest-4vcpu");
  tree.write("/sys/fs/cgroup/cgroup.subtree_control", "\n");
  tree.write("/sys/fs/cgroup/system.slice/cpuset.cpus", "\n");
  KnobWriter knobs(tree.fs());
  CgroupCpusetActuator actuator(knobs, kCgroup, false);
  auto prepared = actuator.prepare(at(0));
  ASSERT_TRUE(prepared) << prepared.error().message;
  EXPECT_TRUE(prepared->changed);
  EXPECT_NE(prepared->detail.find("cpuset controller enabled"), std::string::npos) << prepared->detail;
  EXPECT_EQ(tree.read("/sys/fs/cgroup/cgroup.subtree_control"), "+cpuset");
  EXPECT_EQ(tree.read("/sys/fs/cgroup/system.slice/cpuset.cpus"), "\n") << "no CPU restricted";
  EXPECT_TRUE(tree.fs().exists("/run/vcpufold/cpuset-state.json")) << "recorded, for stop and --restore";
  tree.write("/sys/fs/cgroup/cgroup.subtree_control", "cpuset\n");  // as the kernel shows it
  EXPECT_FALSE(actuator.prepare(at(10))->changed) << "once";
  EXPECT_FALSE(actuator.release(at(20))->changed) << "nothing folded: nothing to release";

  auto folded = actuator.apply(CpuSet{0}, at(30));
  ASSERT_TRUE(folded) << folded.error().message;
  EXPECT_EQ(tree.read("/sys/fs/cgroup/cgroup.subtree_control"), "cpuset\n") << "not written again";
  EXPECT_EQ(tree.read("/sys/fs/cgroup/system.slice/cpuset.cpus"), "0");
  ASSERT_TRUE(actuator.release(at(40)));
  EXPECT_EQ(tree.read("/sys/fs/cgroup/system.slice/cpuset.cpus"), "\n");
  EXPECT_EQ(tree.read("/sys/fs/cgroup/cgroup.subtree_control"), "cpuset\n") << "an unfold keeps the controller";
  EXPECT_NE(tree.read("/run/vcpufold/cpuset-state.json").find("\"enabled_cpuset\":true"), std::string::npos);
  EXPECT_NE(tree.read("/run/vcpufold/cpuset-state.json").find("\"managed\":[]"), std::string::npos);

  // A crash now: --restore gives the controller back from the state file alone.
  ASSERT_TRUE(CgroupCpusetActuator::restoreFromState(tree.fs()));
  EXPECT_EQ(tree.read("/sys/fs/cgroup/cgroup.subtree_control"), "-cpuset");
  EXPECT_FALSE(tree.fs().exists("/run/vcpufold/cpuset-state.json"));

  // And a stop after a prepare does the same.
  tree.write("/sys/fs/cgroup/cgroup.subtree_control", "\n");
  CgroupCpusetActuator again(knobs, kCgroup, false);
  ASSERT_TRUE(again.prepare(at(50)));
  ASSERT_TRUE(again.restore());
  EXPECT_EQ(tree.read("/sys/fs/cgroup/cgroup.subtree_control"), "-cpuset");
  EXPECT_FALSE(tree.fs().exists("/run/vcpufold/cpuset-state.json"));
}

TEST(CgroupCpuset, LeavesTheControllerOnWhenItWasAlreadyOn) {
  FixtureTree tree("lab-guest-4vcpu");
  ASSERT_NE(tree.read("/sys/fs/cgroup/cgroup.subtree_control").find("cpuset"), std::string::npos);
  tree.write("/sys/fs/cgroup/system.slice/cpuset.cpus", "\n");
  KnobWriter knobs(tree.fs());
  CgroupCpusetActuator actuator(knobs, kCgroup, false);
  ASSERT_TRUE(actuator.apply(CpuSet{0}, at(0)));
  EXPECT_EQ(tree.read("/sys/fs/cgroup/system.slice/cpuset.cpus"), "0");
  EXPECT_FALSE(tree.fs().exists("/sys/fs/cgroup/vcpufold.fold")) << "moving root tasks was off";
  ASSERT_TRUE(actuator.restore());
  EXPECT_EQ(tree.read("/sys/fs/cgroup/cgroup.subtree_control"), "cpuset\n");
  EXPECT_EQ(tree.read("/sys/fs/cgroup/system.slice/cpuset.cpus"), "\n");
}

TEST(CgroupCpuset, RestoreWithoutStateDoesNothing) {
  FixtureTree tree("lab-guest-4vcpu");
  const std::string before = tree.read("/sys/fs/cgroup/system.slice/cpuset.cpus");
  EXPECT_TRUE(CgroupCpusetActuator::restoreFromState(tree.fs()));
  EXPECT_EQ(tree.read("/sys/fs/cgroup/system.slice/cpuset.cpus"), before);
}

TEST(KernelActuator, ReleaseHandsTheMaskBackOnce) {
  FixtureTree tree("lab-guest-4vcpu");
  tree.write("/sys/devices/system/cpu/preferred", "0-3\n");
  KnobWriter knobs(tree.fs());
  KernelActuator actuator(knobs);
  ASSERT_TRUE(actuator.apply(CpuSet{0}, at(0)));
  auto released = actuator.release(at(1));
  ASSERT_TRUE(released);
  EXPECT_TRUE(released->changed);
  EXPECT_EQ(tree.read("/sys/devices/system/cpu/preferred"), "\n");
  tree.write("/sys/devices/system/cpu/preferred", "0-3\n");  // what the kernel then shows
  EXPECT_FALSE(actuator.release(at(2))->changed) << "no write every interval";
  EXPECT_EQ(tree.read("/sys/devices/system/cpu/preferred"), "0-3\n");
}

TEST(CgroupCpuset, ReleaseWithNothingOfOursTouchesNothing) {
  FixtureTree tree("lab-guest-4vcpu");
  tree.write("/sys/fs/cgroup/system.slice/cpuset.cpus", "\n");
  tree.write("/sys/fs/cgroup/cgroup.procs", "");
  KnobWriter knobs(tree.fs());
  CgroupCpusetActuator actuator(knobs, kCgroup, true);
  EXPECT_FALSE(actuator.release(at(0))->changed);
  EXPECT_FALSE(tree.fs().exists("/sys/fs/cgroup/vcpufold.fold"));
  ASSERT_TRUE(actuator.apply(CpuSet{0, 1}, at(0)));
  EXPECT_EQ(tree.read("/sys/fs/cgroup/system.slice/cpuset.cpus"), "0-1");
  tree.remove("/sys/fs/cgroup/vcpufold.fold");  // empty: rmdir would succeed on cgroupfs
  tree.write("/sys/fs/cgroup/vcpufold.fold/.keep", "");
  tree.remove("/sys/fs/cgroup/vcpufold.fold/.keep");
  auto released = actuator.release(at(1));
  ASSERT_TRUE(released) << released.error().message;
  EXPECT_TRUE(released->changed);
  EXPECT_EQ(tree.read("/sys/fs/cgroup/system.slice/cpuset.cpus"), "\n");
  EXPECT_FALSE(actuator.release(at(2))->changed);
}
