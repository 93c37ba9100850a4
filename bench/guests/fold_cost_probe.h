// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Runs the fold-cost probe (fold_cost.h) on one guest kernel: boots one TCG
// guest confined to host CPU 0 and measures `pairs` compute units each way.

#include <string>
#include <vector>

#include "fold_cost.h"
#include "guest_lab.h"

namespace vcpufold::bench {

// `lab` names one guest; its cpuset should be one host CPU. Each pair's
// result is printed as it comes. Throws when the guest does not answer or a
// unit fails.
std::vector<FoldCostPair> probeFoldCost(const GuestLabSpec& lab, unsigned pairs, unsigned unitSize);

}  // namespace vcpufold::bench
