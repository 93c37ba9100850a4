#include "vcpufold/hostd/capacity.h"

#include <algorithm>

namespace vcpufold::hostd {

double busyCpus(const std::map<unsigned, CpuTicks>& previous, const std::map<unsigned, CpuTicks>& current,
                const protocol::CpuSet& pool) {
  double busy = 0;
  for (const auto& [cpu, now] : current) {
    if (!pool.contains(cpu)) continue;
    const auto before = previous.find(cpu);
    if (before == previous.end() || now.total <= before->second.total || now.busy < before->second.busy) continue;
    busy += static_cast<double>(now.busy - before->second.busy) / static_cast<double>(now.total - before->second.total);
  }
  return busy;
}

double vmCapacity(const CapacityInputs& inputs) {
  const double nonVm = std::max(inputs.hostBusyCpus - inputs.vmRunCpus, 0.0);
  return std::max(inputs.poolCpus - inputs.reserveCpus - nonVm, 0.0);
}

}  // namespace vcpufold::hostd
