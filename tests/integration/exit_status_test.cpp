// SPDX-License-Identifier: GPL-2.0-or-later
// Both daemons' exit statuses as systemd sees them (the man pages' EXIT
// STATUS): a wrong command line is 64, a configuration that does not
// validate is 78 from the daemon, --oneshot and --check-config alike, so the
// units' RestartPreventExitStatus=64 78 stops a restart loop on them.

#include <gtest/gtest.h>

#include <string>

#include "child_process.h"
#include "fixture_tree.h"

using vcpufold::testing::FixtureTree;
using vcpufold::testing::runShell;

namespace {

struct Outcome {
  int status;
  std::string output;  // stdout and stderr
};

Outcome run(const std::string& command) {
  const std::string text = runShell(command + " 2>&1; echo \"exit=$?\"");
  const auto at = text.rfind("exit=");
  return {at == std::string::npos ? -1 : std::stoi(text.substr(at + 5)), text.substr(0, at)};
}

TEST(ExitStatus, HostdSays64ForACommandLineAnd78ForAConfigurationItCannotUse) {
  FixtureTree work("");
  const std::string dir = work.root().string();
  const std::string hostd = VCPUFOLD_HOSTD_BINARY;
  EXPECT_EQ(run(hostd + " --no-such-option").status, 64);
  EXPECT_EQ(run(hostd + " --help").status, 0);

  work.write("/good.toml", "[metrics]\naddress = \"[::]:9477\"\n[control]\nsocket = \"" + dir + "/hostd.sock\"\n");
  const auto good = run(hostd + " --check-config --config " + dir + "/good.toml");
  EXPECT_EQ(good.status, 0) << good.output;
  EXPECT_NE(good.output.find("metrics [::]:9477"), std::string::npos) << good.output;

  work.write("/bad.toml", "[metrics]\naddress = \"localhost:9477\"\n[control]\nsocket = \"" + dir + "/hostd.sock\"\n");
  for (const std::string mode : {"--check-config", "--oneshot", ""}) {
    const auto bad = run(hostd + " " + mode + " --config " + dir + "/bad.toml");
    EXPECT_EQ(bad.status, 78) << mode << ": " << bad.output;
    EXPECT_NE(bad.output.find("metrics.address \"localhost:9477\""), std::string::npos) << mode << ": " << bad.output;
  }
  EXPECT_FALSE(work.fs().exists("/hostd.sock")) << "a refused configuration starts nothing";
}

TEST(ExitStatus, AgentSays64ForACommandLineAnd78ForAConfigurationItCannotUse) {
  FixtureTree work("");
  const std::string dir = work.root().string();
  const std::string agent = VCPUFOLD_AGENT_BINARY;
  EXPECT_EQ(run(agent + " --no-such-option").status, 64);
  EXPECT_EQ(run(agent + " --help").status, 0);
  work.write("/bad.toml", "[agent]\ninterval_ms = 5\n");
  for (const std::string mode : {"--check-config", "--oneshot", ""}) {
    const auto bad = run(agent + " " + mode + " --config " + dir + "/bad.toml --port unix-listen:" + dir + "/a.sock");
    EXPECT_EQ(bad.status, 78) << mode << ": " << bad.output;
    EXPECT_NE(bad.output.find("agent.interval_ms"), std::string::npos) << mode << ": " << bad.output;
  }
  EXPECT_FALSE(work.fs().exists("/a.sock")) << "a refused configuration opens no port";
}

}  // namespace
