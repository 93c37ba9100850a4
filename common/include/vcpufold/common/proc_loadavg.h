// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// /proc/loadavg's count of runnable tasks ("0.52 0.58 0.59 3/467 12345": the
// 3), the same count as /proc/stat's procs_running (both are the kernel's
// nr_running()). The agent samples it many times a second for its demand:
// /proc/loadavg is a few bytes the kernel prints at once, where /proc/stat
// sums every IRQ's count over every CPU at each read.

#include <cstdint>
#include <string_view>

#include "vcpufold/common/expected.h"

namespace vcpufold {

// Runnable tasks right now, the reader included. Strict: five fields, the
// fourth "RUNNING/THREADS" in digits; anything else is an error.
Expected<std::uint32_t> parseLoadavgRunning(std::string_view text);

}  // namespace vcpufold
