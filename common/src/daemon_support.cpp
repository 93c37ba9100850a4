// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/common/daemon_support.h"

#include <malloc.h>
#include <unistd.h>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace vcpufold {

std::string joinLines(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += (text.empty() ? "" : "\n") + line;
  return text;
}

std::string joinWords(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& word : words) text += (text.empty() ? "" : ", ") + word;
  return text;
}

std::shared_ptr<spdlog::logger> makeDaemonLogger(const std::string& name, const std::string& level) {
  auto logger = spdlog::stderr_color_mt(name);
  logger->set_pattern(::isatty(STDERR_FILENO) ? "%Y-%m-%d %H:%M:%S.%e %^%l%$ %v" : "%l: %v");
  logger->set_level(spdlog::level::from_str(level));
  return logger;
}

void keepLargeBlocksAllocated() {
  // Blocks up to 64 MiB from the heap, and the heap's top returned to the
  // kernel only past 256 MiB free: both fixed, so glibc does not move them.
  ::mallopt(M_MMAP_THRESHOLD, 64 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

}  // namespace vcpufold
