// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Small things both daemons do alike.

#include <memory>
#include <string>
#include <vector>

namespace spdlog {
class logger;
}

namespace vcpufold {

// One item per line, in order (every problem of a configuration at once).
std::string joinLines(const std::vector<std::string>& lines);

// A logger on stderr: timestamps on a terminal, none under journald (which
// adds its own). level: trace, debug, info, warn or error.
std::shared_ptr<spdlog::logger> makeDaemonLogger(const std::string& name, const std::string& level);

}  // namespace vcpufold
