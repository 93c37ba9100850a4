// SPDX-License-Identifier: GPL-2.0-or-later
// vcpufold-hostd policy against libvirt's test driver (the real libvirt API;
// tests/fixtures/libvirt-test-driver/node.xml). Each run of the command is
// its own connection, so the test driver's node starts afresh each time: a
// set is checked by what the command reads back in the same run.

#include <gtest/gtest.h>

#include "child_process.h"
#include "fixture_tree.h"

using vcpufold::testing::fixturesDirectory;
using vcpufold::testing::runShell;

namespace {

std::string policyCommand(const std::string& arguments) {
  const std::string uri = "test://" + (fixturesDirectory() / "libvirt-test-driver/node.xml").string();
  return runShell(std::string(VCPUFOLD_HOSTD_BINARY) + " --connect " + uri + " policy " + arguments +
                  " 2>&1; echo \"exit $?\"");
}

}  // namespace

TEST(HostdPolicyCommand, ShowsThePolicyInForceAndWhereItComesFrom) {
  const std::string out = policyCommand("explicit-path");
  EXPECT_NE(out.find("explicit-path: running, persistent, on test://"), std::string::npos) << out;
  EXPECT_NE(out.find("live:   <policy mode=\"auto\" min-vcpus=\"2\" weight=\"300\"/>"), std::string::npos) << out;
  EXPECT_NE(out.find("in force: mode=auto min-vcpus=2 weight=300 (from the live metadata)"), std::string::npos) << out;
  EXPECT_NE(out.find("exit 0"), std::string::npos);
  const std::string none = policyCommand("no-channel show");
  EXPECT_NE(none.find("in force: mode=auto (weight: the VM's cgroup) (default: no policy metadata)"), std::string::npos)
      << none;
  const std::string refused = policyCommand("bad-policy");
  EXPECT_NE(refused.find("refused: mode=\"sometimes\""), std::string::npos) << refused;
  EXPECT_NE(refused.find("in force: the last valid policy hostd read"), std::string::npos) << refused;
}

TEST(HostdPolicyCommand, SetWritesThroughLibvirtAndReadsBack) {
  const std::string out = policyCommand("explicit-path set weight=150 --live");
  EXPECT_NE(out.find("explicit-path live: <"), std::string::npos) << out;
  EXPECT_NE(out.find("weight=\"150\""), std::string::npos) << out;
  EXPECT_NE(out.find("min-vcpus=\"2\""), std::string::npos) << "the other keys stay: " << out;
  EXPECT_EQ(out.find("config:"), std::string::npos) << "--live only: " << out;
  EXPECT_NE(out.find("exit 0"), std::string::npos);
  const std::string both = policyCommand("no-channel set mode=fixed vcpus=1");
  EXPECT_NE(both.find("no-channel live: <"), std::string::npos) << both;
  EXPECT_NE(both.find("no-channel config: <"), std::string::npos) << "neither flag: both scopes" << both;
  const std::string cleared = policyCommand("explicit-path clear --live");
  EXPECT_NE(cleared.find("explicit-path live: no policy metadata: the default"), std::string::npos) << cleared;
}

TEST(HostdPolicyCommand, BadInputIsRefusedAndChangesNothing) {
  const std::string bad = policyCommand("explicit-path set weight=0");
  EXPECT_NE(bad.find("weight"), std::string::npos) << bad;
  EXPECT_NE(bad.find("nothing changed"), std::string::npos) << bad;
  EXPECT_NE(bad.find("exit 1"), std::string::npos) << bad;
  EXPECT_EQ(bad.find("explicit-path live: <"), std::string::npos) << "nothing was written: " << bad;
  const std::string missing = policyCommand("no-such-vm show");
  EXPECT_NE(missing.find("no domain no-such-vm"), std::string::npos) << missing;
  EXPECT_NE(missing.find("exit 1"), std::string::npos);
  const std::string usage = policyCommand("explicit-path set");
  EXPECT_EQ(usage.find("exit 0"), std::string::npos) << usage;
}
