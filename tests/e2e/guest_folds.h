// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// What the end-to-end tests accept as "hostd folded the 4-vCPU guest".

#include <string>

namespace vcpufold::testing {

// A fold to fewer than the guest's 4 vCPUs, as cpuset.cpus.effective and
// hostd's APPLIED column print it. How far hostd folds depends on what else
// this machine runs (its capacity is the pCPUs less that load), which is not
// what these tests are about: they ask that the guest folds and unfolds.
inline bool foldedBelowAllFour(std::string cpus) {
  if (!cpus.empty() && cpus.back() == '\n') cpus.pop_back();
  return cpus == "0" || cpus == "0-1" || cpus == "0-2";
}

}  // namespace vcpufold::testing
