// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// `vcpufold-hostd status --json`: the status table's decision as one JSON
// object, for scripts. Stable keys (docs/hostd.md, "status --json"); numbers
// in CPUs and vCPUs; null where the table shows "-".

#include <string>

#include "vcpufold/hostd/tick.h"

namespace vcpufold::hostd {

std::string renderStatusJson(const TickReport& report);

}  // namespace vcpufold::hostd
