// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// What a VM's vCPUs did while hostd awaited its agent's answer, for the log
// line of an overdue acknowledgement: each vCPU's run time and run-queue
// wait between the inventory's samples around the wait. It tells apart a
// host that kept the guest from running (long waits), a guest that ran but
// whose agent did not answer, and vCPUs that slept through it (neither: the
// wake-up that would have run the agent did not come). From samples hostd
// takes anyway, so saying it reads nothing.

#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "vcpufold/hostd/vcpu_sample.h"

namespace vcpufold::hostd {

// How many of a VM's latest samples hostd keeps for this (one per tick): an
// answer is judged overdue a few seconds after the wait began, and the
// deadline's credits add a few more.
inline constexpr std::size_t kRecentVcpuSamples = 16;

// From the newest sample taken at or before `sinceNs` (else the oldest
// kept) to the newest: e.g. "from 0.4 s before the wait to 2.6 s into it,
// its 4 vCPUs ran 1.95/0.00/0.01/0.00 s and waited to run
// 0.98/0.00/0.00/0.00 s". None when there is no such pair of samples (one
// sample, a different vCPU count, a counter that went back).
std::optional<std::string> describeVcpuTimeSince(const std::deque<VmSample>& recent, std::int64_t sinceNs);

}  // namespace vcpufold::hostd
