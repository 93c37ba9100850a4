#pragma once
// One tick of hostd as a pure function: inventory, samples, channel states and
// the CPU pool in; allocation and one report row per VM out. The daemon and
// --oneshot do the I/O around it; status, metrics and logs render its report.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vcpufold/hostd/allocation.h"
#include "vcpufold/hostd/channel_session.h"
#include "vcpufold/hostd/inventory.h"
#include "vcpufold/hostd/vcpu_sample.h"

namespace vcpufold::hostd {

struct VmReport {
  VmRecord record;
  std::optional<VmLoad> load;  // none on the first tick or after a counter reset
  double weight = 100.0;
  ChannelSnapshot channel;
  VmAllocation allocation;
};

struct TickReport {
  std::uint64_t tick = 0;
  double poolCpus = 0.0;
  std::string poolSource;
  double reserveCpus = 0.0;
  double hostBusyCpus = 0.0;
  double vmRunCpus = 0.0;
  double measuredNonVmCpus = 0.0;  // host busy - VM run this tick
  double nonVmCpus = 0.0;          // what capacity counts: the smaller of this tick's and the last's
  double capacity = 0.0;
  double totalDemand = 0.0;
  bool contention = false;
  std::vector<VmReport> vms;
};

struct TickInputs {
  std::vector<VmRecord> vms;
  std::map<std::string, VmSample> samples;
  std::map<std::string, VmSample> previousSamples;
  std::map<std::string, ChannelSnapshot> channels;
  double poolCpus = 0.0;
  std::string poolSource;
  double reserveCpus = 0.0;
  std::optional<double> hostBusyCpus;       // none on the first tick: no non-VM load known
  std::optional<double> previousNonVmCpus;  // the last tick's measuredNonVmCpus
  bool cgroupV2 = true;                     // libvirt's cpu_shares is cpu.weight (v2) or cpu.shares (v1)
};

// A VM's weight on the cpu.weight scale (100 = default): the policy's, else its
// cgroup's (v1 shares 1024 = weight 100), else 100.
double effectiveWeight(const VmRecord& vm, bool cgroupV2);

TickReport decideTick(const AllocationConfig& config, const TickInputs& inputs,
                      std::map<std::string, HintState>& hintState, std::uint64_t tick);

}  // namespace vcpufold::hostd
