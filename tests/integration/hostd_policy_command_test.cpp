// SPDX-License-Identifier: GPL-2.0-or-later
// vcpufold-hostd policy against libvirt's test driver (the real libvirt API;
// tests/fixtures/libvirt-test-driver/node.xml). Each run of the command is
// its own connection, so the test driver's node starts afresh each time: a
// set is checked by what the command reads back in the same run.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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
  EXPECT_NE(none.find("in force: mode=auto (weight: the VM's cgroup) (default: no policy metadata, no fleet rule "
                      "matches)"),
            std::string::npos)
      << none;
  const std::string refused = policyCommand("bad-policy");
  EXPECT_NE(refused.find("refused: mode=\"sometimes\""), std::string::npos) << refused;
  EXPECT_NE(refused.find("in force: the last valid policy hostd read"), std::string::npos) << refused;
}

TEST(HostdPolicyCommand, ShowJsonGivesTheSameReadingToScripts) {
  const std::string uri = "test://" + (fixturesDirectory() / "libvirt-test-driver/node.xml").string();
  const auto show = [&](const std::string& vm) {
    const std::string text =
        runShell(std::string(VCPUFOLD_HOSTD_BINARY) + " --connect " + uri + " policy " + vm + " show --json");
    return nlohmann::json::parse(text, nullptr, false);
  };
  const auto out = show("explicit-path");
  ASSERT_FALSE(out.is_discarded());
  EXPECT_EQ(out["vm"], "explicit-path");
  EXPECT_EQ(out["running"], true);
  EXPECT_EQ(out["live"]["metadata"], "<policy mode=\"auto\" min-vcpus=\"2\" weight=\"300\"/>") << out.dump();
  EXPECT_EQ(out["in_force"]["from"], "live metadata") << out.dump();
  EXPECT_EQ(out["in_force"]["policy"]["min_vcpus"], 2) << out.dump();
  EXPECT_EQ(out["in_force"]["policy"]["weight"], 300) << out.dump();
  EXPECT_TRUE(out["in_force"]["policy"]["max_vcpus"].is_null()) << out.dump();
  const auto none = show("no-channel");
  ASSERT_FALSE(none.is_discarded());
  EXPECT_EQ(none["in_force"]["from"], "default") << none.dump();
  EXPECT_TRUE(none["live"]["metadata"].is_null()) << none.dump();
  const auto refused = show("bad-policy");
  ASSERT_FALSE(refused.is_discarded());
  EXPECT_NE(refused["live"]["refused"].get<std::string>().find("mode=\"sometimes\""), std::string::npos)
      << refused.dump();
  EXPECT_TRUE(refused["in_force"]["policy"].is_null()) << refused.dump();
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

TEST(HostdPolicyCommand, AVmWithoutMetadataShowsTheFleetRuleThatGivesItsPolicy) {
  vcpufold::testing::FixtureTree work("");
  work.write("/hostd.toml",
             "[[rule]]\nname = \"db-*\"\nweight = 400\n"
             "[[rule]]\nnova_flavor = \"m1.*\"\nmin_vcpus = 2\n");
  const std::string uri = "test://" + (fixturesDirectory() / "libvirt-test-driver/fleet-node.xml").string();
  const auto show = [&](const std::string& vm) {
    return runShell(std::string(VCPUFOLD_HOSTD_BINARY) + " --config " + work.root().string() +
                    "/hostd.toml --connect " + uri + " policy " + vm + " 2>&1");
  };
  const std::string nova = show("instance-0000002a");
  EXPECT_NE(nova.find("in force: mode=auto min-vcpus=2 (weight: the VM's cgroup) (no policy metadata: from rule 2 "
                      "(nova_flavor=m1.*) in hostd.toml)"),
            std::string::npos)
      << nova;
  EXPECT_NE(show("db-1").find("from rule 1 (name=db-*)"), std::string::npos) << show("db-1");
  EXPECT_NE(show("web-own").find("in force: mode=fixed vcpus=2 (weight: the VM's cgroup) (from the live metadata)"),
            std::string::npos)
      << show("web-own");
}

TEST(HostdPolicyCommand, OneshotSaysWhichRuleOrMetadataGaveEachVmItsPolicy) {
  vcpufold::testing::FixtureTree work("");
  work.write("/hostd.toml",
             "[hostd]\ninterval_ms = 100\n[[rule]]\npartition = \"/machine/batch\"\nmode = \"off\"\n"
             "[[rule]]\nnova_flavor = \"m1.*\"\nmin_vcpus = 2\n");
  const std::string uri = "test://" + (fixturesDirectory() / "libvirt-test-driver/fleet-node.xml").string();
  const std::string out = runShell(std::string(VCPUFOLD_HOSTD_BINARY) + " --config " + work.root().string() +
                                   "/hostd.toml --connect " + uri + " --metrics '' --oneshot 2>&1");
  EXPECT_NE(out.find("[policy: rule 1 (partition=/machine/batch)]"), std::string::npos) << out;
  EXPECT_NE(out.find("[policy: rule 2 (nova_flavor=m1.*)]"), std::string::npos) << out;
  EXPECT_NE(out.find("web-own: "), std::string::npos) << out;
  EXPECT_NE(out.find("[policy: metadata]"), std::string::npos) << out;
  EXPECT_NE(out.find("[policy: default]"), std::string::npos) << "db-1 matches no rule\n" << out;
  // The table's POLICY column is the rule's: batch-7 is "off".
  const auto row = out.find("\nbatch-7 ");
  ASSERT_NE(row, std::string::npos) << out;
  EXPECT_NE(out.substr(row, out.find('\n', row + 1) - row).find(" off "), std::string::npos) << out;
}
