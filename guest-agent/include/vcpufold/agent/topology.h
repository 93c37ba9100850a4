// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The guest's CPU topology as placement needs it, read from sysfs.

#include <cstddef>
#include <vector>

#include "vcpufold/common/expected.h"
#include "vcpufold/common/rooted_fs.h"
#include "vcpufold/protocol/cpu_set.h"

namespace vcpufold::agent {

using protocol::CpuSet;

// One physical core: its online SMT threads and its NUMA node.
struct Core {
  CpuSet threads;
  unsigned node = 0;
  friend bool operator==(const Core&, const Core&) = default;
};

struct Topology {
  CpuSet possible;
  CpuSet online;
  // Online CPUs the scheduler may use for housekeeping: not nohz_full and not
  // isolated. Equals online when those leave nothing.
  CpuSet housekeeping;
  std::vector<Core> cores;  // online cores, ascending by their first thread
  unsigned numaNodes = 1;   // nodes that have online CPUs
  unsigned threadsPerCore = 1;
};

// Reads /sys/devices/system/cpu and /sys/devices/system/node. Fails when the
// online list is missing or unreadable; tolerates missing topology or node
// files (each CPU its own core, one node), as minimal kernels have.
Expected<Topology> readTopology(const RootedFs& fs);

}  // namespace vcpufold::agent
