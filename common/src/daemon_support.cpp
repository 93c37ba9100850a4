// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/common/daemon_support.h"

#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/systemd_sink.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>

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

namespace {

// systemd sets JOURNAL_STREAM to the device and inode of the stream it
// connected to the journal; it is ours only while stderr is still that
// stream (a shell redirection under the unit makes it something else).
bool stderrIsTheJournal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  struct stat status {};
  unsigned long long device = 0, inode = 0;
  if (!stream || std::sscanf(stream, "%llu:%llu", &device, &inode) != 2 || ::fstat(STDERR_FILENO, &status) != 0)
    return false;
  return status.st_dev == device && status.st_ino == inode;
}

}  // namespace

std::shared_ptr<spdlog::logger> makeDaemonLogger(const std::string& name, const std::string& level) {
  std::shared_ptr<spdlog::logger> logger;
  if (stderrIsTheJournal()) {
    // Each line at its level's priority (journalctl -p warning), as the
    // unit's name; a line on stderr would get the unit's one priority.
    logger = spdlog::systemd_logger_mt(name, name);
  } else {
    logger = spdlog::stderr_color_mt(name);
    logger->set_pattern(::isatty(STDERR_FILENO) ? "%Y-%m-%d %H:%M:%S.%e %^%l%$ %v" : "%l: %v");
  }
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
