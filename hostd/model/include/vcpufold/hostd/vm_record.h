// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// One model of a VM for every inventory backend (libvirt, QMP): what the
// inventory reads and the decision uses.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vcpufold/hostd/policy.h"
#include "vcpufold/protocol/cpu_set.h"

namespace vcpufold::hostd {

// Where a VM's vCPUs may run on the host: the pCPUs of the thread affinity of
// its vCPU threads (which reflects libvirt's vcpupin, <vcpu cpuset>, and the
// cgroup cpusets), else libvirt's pinning record. Read at inventory refresh.
struct VcpuPlacement {
  protocol::CpuSet cpus;        // the union over its vCPUs; empty: not known (anywhere in the pool)
  bool pinnedOneToOne = false;  // every vCPU pinned to a single pCPU, each to a different one
  std::string source;           // where it was read, for --oneshot and logs
  friend bool operator==(const VcpuPlacement&, const VcpuPlacement&) = default;
};

// The placement of vCPUs whose allowed pCPUs are known one by one.
VcpuPlacement placementOf(const std::vector<protocol::CpuSet>& vcpuCpus, std::string source);

// Where a VM's policy came from: the built-in default, its libvirt metadata,
// its [[vm]] table of hostd.toml, or a fleet rule ([[rule]], fleet_rule.h).
enum class PolicySource { Default, Metadata, Config, Rule };
const char* policySourceName(PolicySource source);

struct VmRecord {
  std::string name;
  std::string uuid;  // libvirt only
  std::uint32_t vcpus = 0;
  std::optional<std::string> channelSocket;   // host end of org.vcpufold.hint.0
  std::optional<std::string> channelProblem;  // a channel exists but cannot be used, and why
  FoldPolicy policy;                          // last valid policy (the default when none is set)
  PolicySource policySource = PolicySource::Default;
  std::string policyRule;                  // with PolicySource::Rule: which ("rule 2 (name=web-*)")
  std::optional<std::string> policyError;  // the current policy is malformed, and why
  std::optional<std::string> novaFlavor;   // OpenStack Nova's flavor name, from the domain's metadata
  std::optional<std::string> partition;    // libvirt's <resource><partition>
  std::optional<double> cgroupWeight;      // raw cpu_shares from libvirt (cpu.weight on v2 hosts)
  VcpuPlacement placement;
};

}  // namespace vcpufold::hostd
