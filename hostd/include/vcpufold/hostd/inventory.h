#pragma once
// One model of a VM for every inventory backend (libvirt, QMP).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vcpufold/common/expected.h"
#include "vcpufold/hostd/policy.h"
#include "vcpufold/hostd/vcpu_sample.h"

namespace vcpufold::hostd {

struct VmRecord {
  std::string name;
  std::string uuid;                          // libvirt only
  std::uint32_t vcpus = 0;
  std::optional<std::string> channelSocket;  // host end of org.vcpufold.hint.0
  std::optional<std::string> channelProblem; // a channel exists but cannot be used, and why
  FoldPolicy policy;                         // last valid policy (the default when none is set)
  std::optional<std::string> policyError;    // the current policy is malformed, and why
  std::optional<double> cgroupWeight;        // raw cpu_shares from libvirt (cpu.weight on v2 hosts)
};

class Inventory {
 public:
  virtual ~Inventory() = default;
  [[nodiscard]] virtual std::string describe() const = 0;
  // The VMs running now.
  virtual Expected<std::vector<VmRecord>> refresh() = 0;
  // vCPU counters of the VMs of the last refresh, by name.
  virtual Expected<std::map<std::string, VmSample>> sample() = 0;
  // Things worth a log line since the last call (QEMU events, VMs appearing).
  virtual std::vector<std::string> takeNotes() { return {}; }
};

}  // namespace vcpufold::hostd
