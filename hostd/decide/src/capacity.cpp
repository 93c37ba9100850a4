// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/capacity.h"

namespace vcpufold::hostd {

std::map<unsigned, double> busyPerCpu(const std::map<unsigned, CpuTicks>& previous,
                                      const std::map<unsigned, CpuTicks>& current, const protocol::CpuSet& cpus) {
  std::map<unsigned, double> busy;
  for (const auto& [cpu, now] : current) {
    if (!cpus.contains(cpu)) continue;
    const auto before = previous.find(cpu);
    if (before == previous.end() || now.total <= before->second.total || now.busy < before->second.busy) continue;
    busy[cpu] =
        static_cast<double>(now.busy - before->second.busy) / static_cast<double>(now.total - before->second.total);
  }
  return busy;
}

double busyCpus(const std::map<unsigned, CpuTicks>& previous, const std::map<unsigned, CpuTicks>& current,
                const protocol::CpuSet& cpus) {
  double total = 0;
  for (const auto& [cpu, busy] : busyPerCpu(previous, current, cpus)) total += busy;
  return total;
}

}  // namespace vcpufold::hostd
