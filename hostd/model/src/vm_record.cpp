// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/vm_record.h"

namespace vcpufold::hostd {

const char* policySourceName(PolicySource source) {
  switch (source) {
    case PolicySource::Metadata:
      return "metadata";
    case PolicySource::Config:
      return "hostd.toml [[vm]]";
    case PolicySource::Rule:
      return "rule";
    case PolicySource::Default:
      break;
  }
  return "default";
}

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
