// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/vm_record.h"

namespace vcpufold::hostd {

VcpuPlacement placementOf(const std::vector<protocol::CpuSet>& vcpuCpus, std::string source) {
  VcpuPlacement placement;
  placement.source = std::move(source);
  if (vcpuCpus.empty()) return placement;
  bool oneToOne = true;
  for (const protocol::CpuSet& cpus : vcpuCpus) {
    // A pCPU a second vCPU may also use is shared, not dedicated.
    if (cpus.size() != 1 || !(placement.cpus & cpus).empty()) oneToOne = false;
    placement.cpus = placement.cpus | cpus;
  }
  placement.pinnedOneToOne = oneToOne && !placement.cpus.empty();
  return placement;
}

}  // namespace vcpufold::hostd
