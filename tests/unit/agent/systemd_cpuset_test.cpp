// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include "fixture_tree.h"
#include "vcpufold/agent/systemd_cpuset_actuator.h"
#include "vcpufold/protocol/cpulist.h"
#include "test_time.h"

using namespace vcpufold::agent;
using vcpufold::Expected;
using vcpufold::protocol::CpuSet;
using vcpufold::testing::FixtureTree;

namespace {

// Records what would go to systemd over D-Bus (the edge this test is not about),
// and, as systemd would, writes cpuset.cpus in the fixture.
class RecordingUnits final : public SystemdUnits {
 public:
  explicit RecordingUnits(const FixtureTree& tree, std::vector<std::string>& calls) : tree_(tree), calls_(calls) {}
  Expected<void> setAllowedCpus(const std::string& unit, const CpuSet& cpus) override {
    calls_.push_back(unit + "=" + vcpufold::protocol::formatCpuList(cpus));
    tree_.write("/sys/fs/cgroup/" + unit + "/cpuset.cpus", vcpufold::protocol::formatCpuList(cpus) + "\n");
    return {};
  }

 private:
  const FixtureTree& tree_;
  std::vector<std::string>& calls_;
};

}  // namespace

TEST(SystemdCpuset, MaskIsSystemdsByteOrder) {
  EXPECT_TRUE(systemdCpuMask(CpuSet{}).empty());
  EXPECT_EQ(systemdCpuMask(CpuSet{0}), (std::vector<std::uint8_t>{0x01}));
  EXPECT_EQ(systemdCpuMask(CpuSet{0, 1, 2, 3}), (std::vector<std::uint8_t>{0x0f}));
  EXPECT_EQ(systemdCpuMask(CpuSet{1, 9}), (std::vector<std::uint8_t>{0x02, 0x02}));
  EXPECT_EQ(systemdCpuMask(CpuSet{15}), (std::vector<std::uint8_t>{0x00, 0x80}));
}

TEST(SystemdCpuset, DetectsSystemdAsInit) {
  FixtureTree tree("lab-guest-4vcpu");
  EXPECT_FALSE(SystemdCpusetActuator::systemdIsInit(tree.fs()));
  tree.write("/run/systemd/system/.keep", "");
  EXPECT_TRUE(SystemdCpusetActuator::systemdIsInit(tree.fs()));
}

TEST(SystemdCpuset, RestrictsTopLevelUnitsAndResetsThem) {
  FixtureTree tree("lab-guest-4vcpu");
  tree.write("/sys/fs/cgroup/system.slice/cpuset.cpus", "\n");
  tree.write("/sys/fs/cgroup/user.slice/cpuset.cpus", "\n");
  tree.write("/sys/fs/cgroup/init.scope/cpuset.cpus", "\n");
  tree.write("/sys/fs/cgroup/pinned.slice/cpuset.cpus", "3\n");        // set elsewhere
  tree.write("/sys/fs/cgroup/admin.slice/cpuset.cpus", "0-3\n");      // set elsewhere, to every CPU
  tree.write("/sys/fs/cgroup/dev-hugepages.mount/cpuset.cpus", "\n");  // not a slice or scope
  std::vector<std::string> calls;
  SystemdCpusetActuator actuator(tree.fs(), "/sys/fs/cgroup", std::make_unique<RecordingUnits>(tree, calls));

  auto applied = actuator.apply(CpuSet{0, 1}, at(0));
  ASSERT_TRUE(applied) << applied.error().message;
  EXPECT_EQ(calls, (std::vector<std::string>{"init.scope=0-1", "system.slice=0-1", "user.slice=0-1"}));
  EXPECT_NE(applied->detail.find("pinned.slice"), std::string::npos);
  EXPECT_NE(applied->detail.find("left admin.slice alone"), std::string::npos) << applied->detail;
  EXPECT_EQ(tree.read("/sys/fs/cgroup/admin.slice/cpuset.cpus"), "0-3\n");
  EXPECT_TRUE(tree.fs().exists("/run/vcpufold/systemd-state.json"));

  calls.clear();
  EXPECT_FALSE(actuator.apply(CpuSet{0, 1}, at(1))->changed) << "read-compare: systemd already holds it";
  EXPECT_TRUE(calls.empty());

  // A fresh process (--restore after a crash) resets exactly our units.
  std::vector<std::string> resets;
  RecordingUnits units(tree, resets);
  ASSERT_TRUE(SystemdCpusetActuator::restoreFromState(tree.fs(), units));
  EXPECT_EQ(resets, (std::vector<std::string>{"init.scope=", "system.slice=", "user.slice="}));
  EXPECT_EQ(tree.read("/sys/fs/cgroup/admin.slice/cpuset.cpus"), "0-3\n") << "the administrator's value stays";
  EXPECT_FALSE(tree.fs().exists("/run/vcpufold/systemd-state.json"));
}

TEST(SystemdCpuset, ReleaseResetsOnceAndSkipsVanishedUnits) {
  FixtureTree tree("lab-guest-4vcpu");
  tree.write("/sys/fs/cgroup/system.slice/cpuset.cpus", "\n");
  tree.write("/sys/fs/cgroup/session-3.scope/cpuset.cpus", "\n");
  std::vector<std::string> calls;
  SystemdCpusetActuator actuator(tree.fs(), "/sys/fs/cgroup", std::make_unique<RecordingUnits>(tree, calls));
  ASSERT_TRUE(actuator.apply(CpuSet{0}, at(0)));
  tree.remove("/sys/fs/cgroup/session-3.scope");  // the session ended
  calls.clear();
  auto released = actuator.release(at(1));
  ASSERT_TRUE(released) << released.error().message;
  EXPECT_TRUE(released->changed);
  EXPECT_EQ(calls, (std::vector<std::string>{"system.slice="}));
  calls.clear();
  EXPECT_FALSE(actuator.release(at(2))->changed);
  EXPECT_TRUE(calls.empty());
}
