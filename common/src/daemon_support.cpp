// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/common/daemon_support.h"

#include <unistd.h>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace vcpufold {

std::string joinLines(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += (text.empty() ? "" : "\n") + line;
  return text;
}

std::shared_ptr<spdlog::logger> makeDaemonLogger(const std::string& name, const std::string& level) {
  auto logger = spdlog::stderr_color_mt(name);
  logger->set_pattern(::isatty(STDERR_FILENO) ? "%Y-%m-%d %H:%M:%S.%e %^%l%$ %v" : "%l: %v");
  logger->set_level(spdlog::level::from_str(level));
  return logger;
}

}  // namespace vcpufold
