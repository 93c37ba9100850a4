// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Kernel cpulist files read through the rooted filesystem (protocol/ parses
// the text and does no I/O).

#include <string>

#include "vcpufold/common/rooted_fs.h"
#include "vcpufold/protocol/cpu_set.h"

namespace vcpufold {

// The CPUs a kernel cpulist file names, or none when it is absent, cannot be
// parsed, or says "(null)" (Linux 6.1's nohz_full without nohz_full= on the
// boot line): for files whose absence means no CPUs (isolated, nohz_full).
protocol::CpuSet readOptionalCpuListFile(const RootedFs& fs, const std::string& path);

// The CPUs the host keeps from ordinary work: isolated (isolcpus) and nohz_full.
protocol::CpuSet readQuietCpus(const RootedFs& fs);

}  // namespace vcpufold
