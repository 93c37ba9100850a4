// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The Linux cpulist text format ("0-3,8,10-11"), as printed by the kernel's
// %*pbl and found in /sys/devices/system/cpu/{online,preferred,isolated,...}.
// Text only: the files are read by common/cpu_list_files.h (protocol/ does no I/O).

#include <string>
#include <string_view>

#include "vcpufold/common/expected.h"
#include "vcpufold/protocol/cpu_set.h"

namespace vcpufold::protocol {

// Strict parse: comma-separated CPU numbers or inclusive ranges "a-b" with
// a <= b, in ascending order, none overlapping, decimal without leading zeros
// or signs, every number below kMaxCpus, no spaces. "" is the empty set (the
// kernel prints an empty mask that way). Stride syntax ("0-7:2/4") is refused.
// The error says what is wrong and at which byte offset.
Expected<CpuSet> parseCpuList(std::string_view text);

// Same, for the contents of a sysfs file: one trailing newline is allowed.
Expected<CpuSet> parseCpuListFile(std::string_view contents);

// Canonical form: ascending, runs of two or more consecutive CPUs as "a-b"
// (the kernel's own formatting), "" for the empty set.
std::string formatCpuList(const CpuSet& cpus);

}  // namespace vcpufold::protocol
