// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/agent_config.h"

#include <gtest/gtest.h>

using namespace vcpufold::agent;

TEST(AgentConfig, EmptyFileIsTheDefaults) {
  auto config = parseAgentConfig("", "agent.toml");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->intervalMs, 1000u);
  EXPECT_EQ(config->sampleMs, 50u);
  EXPECT_EQ(config->actuator, ActuatorChoice::Auto);
  EXPECT_TRUE(config->fallbackEnabled);
  EXPECT_EQ(config->highThresholdBp, 500u);
  EXPECT_EQ(config->lowThresholdBp, 200u);
  EXPECT_EQ(config->portName, "org.vcpufold.hint.0");
  EXPECT_EQ(config->nice, -10);
}

TEST(AgentConfig, NiceIsANiceValue) {
  EXPECT_EQ(parseAgentConfig("[agent]\nnice = 5\n", "agent.toml")->nice, 5);
  EXPECT_EQ(parseAgentConfig("[agent]\nnice = -20\n", "agent.toml")->nice, -20);
  for (const char* bad : {"nice = -21", "nice = 20", "nice = \"high\"", "nice = -1.5"}) {
    const auto config = parseAgentConfig(std::string("[agent]\n") + bad + "\n", "agent.toml");
    ASSERT_FALSE(config) << bad;
    EXPECT_NE(config.error().message.find("agent.nice: expected an integer -20..19"), std::string::npos)
        << config.error().message;
  }
}

TEST(AgentConfig, EveryKey) {
  auto config = parseAgentConfig(R"(
[agent]
interval_ms = 2000
sample_ms = 100
port = "unix-listen:/run/x.sock"
port_name = "org.example.port"
actuator = "cpuset"
fold = "always"
log_level = "debug"
nice = 0
[fallback]
enabled = false
high_threshold = 1000
low_threshold = 100
[cpuset]
move_root_tasks = false
steer_housekeeping = false
[metrics]
textfile = "/var/lib/prometheus/node-exporter/vcpufold.prom"
)",
                                 "agent.toml");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->intervalMs, 2000u);
  EXPECT_EQ(config->sampleMs, 100u);
  EXPECT_EQ(config->port, "unix-listen:/run/x.sock");
  EXPECT_EQ(config->portName, "org.example.port");
  EXPECT_EQ(config->actuator, ActuatorChoice::Cpuset);
  EXPECT_EQ(config->logLevel, "debug");
  EXPECT_EQ(config->nice, 0);
  EXPECT_FALSE(config->fallbackEnabled);
  EXPECT_EQ(config->highThresholdBp, 1000u);
  EXPECT_EQ(config->lowThresholdBp, 100u);
  EXPECT_FALSE(config->moveRootTasks);
  EXPECT_FALSE(config->steerHousekeeping);
  EXPECT_EQ(config->foldDefault, FoldDefault::Always);
  EXPECT_EQ(config->metricsTextfile, "/var/lib/prometheus/node-exporter/vcpufold.prom");
}

TEST(AgentConfig, HousekeepingIsSteeredByDefaultAndTheKeyTakesBooleansOnly) {
  EXPECT_TRUE(parseAgentConfig("", "agent.toml")->steerHousekeeping);
  auto bad = parseAgentConfig("[cpuset]\nsteer_housekeeping = \"yes\"\n", "agent.toml");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("cpuset.steer_housekeeping"), std::string::npos) << bad.error().message;
}

TEST(AgentConfig, FoldFollowsTheEvidenceByDefaultAndTakesTwoWords) {
  EXPECT_EQ(parseAgentConfig("", "agent.toml")->foldDefault, FoldDefault::ByEvidence);
  EXPECT_EQ(parseAgentConfig("[agent]\nfold = \"always\"\n", "agent.toml")->foldDefault, FoldDefault::Always);
  EXPECT_EQ(parseAgentConfig("[agent]\nfold = \"by-evidence\"\n", "agent.toml")->foldDefault,
            FoldDefault::ByEvidence);
  for (const char* bad : {"fold = \"never\"", "fold = true", "fold = \"Always\""}) {
    auto refused = parseAgentConfig(std::string("[agent]\n") + bad + "\n", "agent.toml");
    ASSERT_FALSE(refused) << bad;
    EXPECT_NE(refused.error().message.find("agent.fold"), std::string::npos) << refused.error().message;
  }
}

TEST(AgentConfig, TheMetricsTextfileIsOffByDefaultAndMustBeAnAbsoluteDotPromFile) {
  EXPECT_EQ(parseAgentConfig("", "agent.toml")->metricsTextfile, "");
  for (const char* bad :
       {"vcpufold.prom", "/var/lib/node-exporter/vcpufold.txt", "/var/lib/node-exporter/",
        "/var/lib/node-exporter/.prom", "/var/lib/../../etc/x.prom", "/var/lib/node-exporter/vcpufold"}) {
    const auto config = parseAgentConfig(std::string("[metrics]\ntextfile = \"") + bad + "\"\n", "agent.toml");
    ASSERT_FALSE(config) << bad;
    EXPECT_NE(config.error().message.find("metrics.textfile: \"" + std::string(bad) + "\" must be an absolute path"),
              std::string::npos)
        << config.error().message;
  }
}

TEST(AgentConfig, TheDefaultSamplePeriodFitsEveryIntervalAndALongerOneIsRefused) {
  auto config = parseAgentConfig("[agent]\ninterval_ms = 200\n", "agent.toml");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->sampleMs, 50u) << "the default is already shorter";
  config = parseAgentConfig("[agent]\ninterval_ms = 100\n", "agent.toml");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->sampleMs, 50u);
  EXPECT_FALSE(parseAgentConfig("[agent]\ninterval_ms = 200\nsample_ms = 300\n", "agent.toml"));
}

TEST(AgentConfig, ReportsEveryProblemAtOnce) {
  auto config = parseAgentConfig(R"(
[agent]
interval_ms = 50
actuator = "magic"
log_level = "loud"
intervl_ms = 3
[fallback]
high_threshold = 100
low_threshold = 300
enabled = "yes"
)",
                                 "/etc/vcpufold/agent.toml");
  ASSERT_FALSE(config);
  const std::string& message = config.error().message;
  for (const char* expected : {"/etc/vcpufold/agent.toml", "agent.interval_ms: 50 is out of range 100..100000",
                               "agent.actuator: \"magic\"", "agent.log_level", "agent.intervl_ms: unknown key",
                               "fallback.low_threshold: 300 must be below", "fallback.enabled: expected true or false"})
    EXPECT_NE(message.find(expected), std::string::npos) << expected << "\n in: " << message;
}

TEST(AgentConfig, SyntaxErrorSaysWhere) {
  auto config = parseAgentConfig("[agent]\ninterval_ms = = 3\n", "agent.toml");
  ASSERT_FALSE(config);
  EXPECT_NE(config.error().message.find("agent.toml:2:"), std::string::npos) << config.error().message;
}

TEST(AgentConfig, WrongTypes) {
  EXPECT_FALSE(parseAgentConfig("[agent]\ninterval_ms = \"1000\"\n", "a"));
  EXPECT_FALSE(parseAgentConfig("[agent]\ninterval_ms = -5\n", "a"));
  EXPECT_FALSE(parseAgentConfig("[agent]\ninterval_ms = 1.5\n", "a"));
  EXPECT_FALSE(parseAgentConfig("[agent]\nport = 3\n", "a"));
  EXPECT_FALSE(parseAgentConfig("interval_ms = 1000\n", "a")) << "keys belong in their table";
}

TEST(AgentConfig, AFloatForAnIntegerIsRefusedWhateverItsSize) {
  // Found by fuzzing: converting 25e20 to an integer was undefined behaviour.
  for (const char* text :
       {"[agent]\nsample_ms = 25e20\n", "[agent]\ninterval_ms = 500.0\n", "[agent]\ninterval_ms = nan\n"}) {
    const auto config = parseAgentConfig(text, "agent.toml");
    ASSERT_FALSE(config) << text;
    EXPECT_NE(config.error().message.find("expected an integer 0.."), std::string::npos) << config.error().message;
  }
}
