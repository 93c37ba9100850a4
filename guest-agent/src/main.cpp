// SPDX-License-Identifier: GPL-2.0-or-later
// vcpufold-agent: command line only; the modes live in agent_app.cpp.
#include <CLI/CLI.hpp>
#include <filesystem>

#include "vcpufold/agent/agent_app.h"
#include "vcpufold/common/exit_status.h"
#include "vcpufold/agent/version.h"

int main(int argc, char** argv) {
  using vcpufold::agent::AgentOptions;
  CLI::App app{
      "vcpufold-agent: keeps the preferred CPUs of this guest as the host's vcpufold-hostd hints, over the\n"
      "virtio-serial port org.vcpufold.hint.0, and falls back to steal-time folding when no hint is valid.\n"
      "It unfolds the guest (all CPUs preferred) when it stops.",
      "vcpufold-agent"};
  app.footer(
      "Modes (default: run as a daemon until SIGTERM):\n"
      "  --check-config   parse and validate the configuration, print it, exit\n"
      "  --oneshot        read topology, actuators and steal, print what the agent would do, exit\n"
      "  --restore        unfold whatever an agent left folded (for ExecStopPost=), exit\n"
      "\nFiles: /etc/vcpufold/agent.toml (configuration), /run/vcpufold/ (state for --restore).\n"
      "Documentation: docs/guest-agent.md; protocol: docs/protocol.md.");
  AgentOptions options;
  std::string root = "/";
  std::string port, actuator, logLevel;
  bool check = false, oneshot = false, restore = false, version = false;
  app.add_option("-c,--config", options.configPath, "configuration file (default /etc/vcpufold/agent.toml)");
  app.add_option("--root", root, "resolve every system path (/proc, /sys, /dev, /run) under DIR, for tests")
      ->check(CLI::ExistingDirectory);
  app.add_option("-p,--port", port,
                 "host channel: a device path, or unix-listen:PATH to listen on a UNIX socket "
                 "(default: the virtio port named org.vcpufold.hint.0)");
  app.add_option("--actuator", actuator, "auto, kernel, cpuset or none (overrides agent.actuator)");
  app.add_option("--log-level", logLevel, "trace, debug, info, warn or error (overrides agent.log_level)");
  auto* checkFlag = app.add_flag("--check-config", check, "validate the configuration and exit");
  auto* oneshotFlag = app.add_flag("--oneshot", oneshot, "print what the agent would do and exit");
  auto* restoreFlag = app.add_flag("--restore", restore, "unfold what an agent left folded and exit");
  checkFlag->excludes(oneshotFlag)->excludes(restoreFlag);
  oneshotFlag->excludes(restoreFlag);
  app.add_flag("-V,--version", version, "print the version and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // --help and --version-like exits are 0; a wrong command line is EX_USAGE.
    return app.exit(error) == 0 ? vcpufold::kExitOk : vcpufold::kExitUsage;
  }

  if (version) {
    std::printf("vcpufold-agent %s\n", vcpufold::agent::kAgentVersion);
    return 0;
  }
  options.root = root;
  options.configExplicit = !options.configPath.empty();
  // A file named on the command line is relative to where the command runs.
  if (options.configExplicit) options.configPath = std::filesystem::absolute(options.configPath).string();
  if (!port.empty()) options.port = port;
  if (!actuator.empty()) options.actuator = actuator;
  if (!logLevel.empty()) options.logLevel = logLevel;
  if (check) return vcpufold::agent::checkConfig(options);
  if (oneshot) return vcpufold::agent::runOneshot(options);
  if (restore) return vcpufold::agent::runRestore(options);
  return vcpufold::agent::runAgent(options);
}
