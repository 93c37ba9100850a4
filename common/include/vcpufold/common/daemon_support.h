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
// "a, b, c": keys or names in a log line.
std::string joinWords(const std::vector<std::string>& words);

// A logger on stderr: timestamps on a terminal, none under journald (which
// adds its own). level: trace, debug, info, warn or error.
std::shared_ptr<spdlog::logger> makeDaemonLogger(const std::string& name, const std::string& level);

// Keeps the allocator from handing large blocks back to the kernel and
// taking them again: hostd builds a report of a few MiB at every decision,
// and glibc's default (mmap above a threshold it moves, trimming the heap's
// top) made each one fault its pages in afresh, which tripled a tick's CPU
// at 1000 VMs (the tick-cost bench, docs/hostd.md). Call first in main.
void keepLargeBlocksAllocated();

}  // namespace vcpufold
