// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The agent's modes, as the command line selects them. main.cpp only parses
// options and calls one of these; each returns the process exit code.

#include <filesystem>
#include <optional>
#include <string>

namespace vcpufold::agent {

struct AgentOptions {
  std::filesystem::path root = "/";          // --root: every system path under this directory
  std::string configPath;                    // --config; default /etc/vcpufold/agent.toml under root
  bool configExplicit = false;               // a missing explicit config is an error
  std::optional<std::string> port;           // --port overrides agent.port
  std::optional<std::string> actuator;       // --actuator overrides agent.actuator
  std::optional<std::string> logLevel;       // --log-level overrides agent.log_level
};

int runAgent(const AgentOptions& options);
int checkConfig(const AgentOptions& options);
int runOneshot(const AgentOptions& options);
int runRestore(const AgentOptions& options);

}  // namespace vcpufold::agent
