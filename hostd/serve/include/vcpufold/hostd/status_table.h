// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The table `vcpufold-hostd status` and `--oneshot` print: one row per VM.

#include <string>

#include "vcpufold/hostd/tick.h"

namespace vcpufold::hostd {

// With reasons: each VM's allocation reason on a line of its own below the table.
std::string renderStatusTable(const TickReport& report, bool withReasons);

}  // namespace vcpufold::hostd
