// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The host's busy time per pCPU between two readings of /proc/stat; what of
// it is the VMs' is decided per pool (cpu_pools.h).

#include <map>

#include "vcpufold/common/proc_stat.h"
#include "vcpufold/protocol/cpu_set.h"

namespace vcpufold::hostd {

// Per pCPU of `cpus`, the share of the time between the readings it was busy
// (a CPU missing from either reading, or whose counters went backwards, is left out).
std::map<unsigned, double> busyPerCpu(const std::map<unsigned, CpuTicks>& previous,
                                      const std::map<unsigned, CpuTicks>& current, const protocol::CpuSet& cpus);

// CPUs' worth of busy time on `cpus` between two readings.
double busyCpus(const std::map<unsigned, CpuTicks>& previous, const std::map<unsigned, CpuTicks>& current,
                const protocol::CpuSet& cpus);

}  // namespace vcpufold::hostd
