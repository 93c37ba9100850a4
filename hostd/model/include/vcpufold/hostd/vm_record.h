#pragma once
// One model of a VM for every inventory backend (libvirt, QMP): what the
// inventory reads and the decision uses.

#include <cstdint>
#include <optional>
#include <string>

#include "vcpufold/hostd/policy.h"

namespace vcpufold::hostd {

struct VmRecord {
  std::string name;
  std::string uuid;  // libvirt only
  std::uint32_t vcpus = 0;
  std::optional<std::string> channelSocket;   // host end of org.vcpufold.hint.0
  std::optional<std::string> channelProblem;  // a channel exists but cannot be used, and why
  FoldPolicy policy;                          // last valid policy (the default when none is set)
  std::optional<std::string> policyError;     // the current policy is malformed, and why
  std::optional<double> cgroupWeight;         // raw cpu_shares from libvirt (cpu.weight on v2 hosts)
};

}  // namespace vcpufold::hostd
