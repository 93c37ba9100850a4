// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// vcpufold-hostd's modes, as the command line selects them; each returns the
// process exit code. main.cpp only parses options.

#include <filesystem>
#include <optional>
#include <string>

namespace vcpufold::hostd {

struct HostdOptions {
  std::filesystem::path root = "/";      // --root: /proc, /sys and /run under this directory
  std::string configPath;                // --config (default /etc/vcpufold/hostd.toml under root)
  bool configExplicit = false;
  std::optional<std::string> connectUri; // --connect: libvirt URI
  std::optional<std::string> logLevel;
  std::optional<std::string> metricsAddress;
  std::optional<std::string> controlSocket;
};

int runHostd(const HostdOptions& options);
int checkHostdConfig(const HostdOptions& options);
int runHostdOneshot(const HostdOptions& options);
// json: the daemon's `status json` answer (status_json.h) instead of the table.
int printHostdStatus(const HostdOptions& options, bool json = false);

}  // namespace vcpufold::hostd
