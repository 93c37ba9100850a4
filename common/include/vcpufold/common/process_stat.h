// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// /proc/PID/stat (and /proc/PID/task/TID/stat), the fields vcpufold uses:
// whether a task is a kernel thread (the agent leaves those where they are),
// when a process started (hostd tells a restarted QEMU, or a reused pid,
// from the process it queried) and the CPU time of all its threads.

#include <cstdint>
#include <string>
#include <string_view>

#include "vcpufold/common/expected.h"

namespace vcpufold {

struct ProcessStat {
  std::string comm;              // field 2, without its parentheses; may hold spaces and parentheses
  std::uint64_t flags = 0;       // field 9: PF_* flags
  std::uint64_t userTicks = 0;   // field 14: utime, of every thread, in clock ticks
  std::uint64_t systemTicks = 0; // field 15: stime, likewise
  std::uint64_t startTicks = 0;  // field 22: start time after boot, in clock ticks
  [[nodiscard]] bool isKernelThread() const;
};

// Fails on anything but a whole stat line of a live kernel: the fields are
// read after the last ')' (the command name may hold both).
Expected<ProcessStat> parseProcessStat(std::string_view text);

// The length of a clock tick (USER_HZ, the unit of utime and stime) in ns.
std::uint64_t nanosecondsPerClockTick();

}  // namespace vcpufold
