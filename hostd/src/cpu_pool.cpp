#include "vcpufold/hostd/cpu_pool.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "vcpufold/common/system_paths.h"
#include "vcpufold/protocol/cpulist.h"

namespace vcpufold::hostd {

Expected<VmCpuPool> readVmCpuPool(const RootedFs& fs) {
  const std::string root = paths::kCgroupRoot;
  for (const std::string& path : {root + "/machine.slice/cpuset.cpus.effective",
                                  root + "/cpuset/machine.slice/cpuset.effective_cpus",
                                  root + "/cpuset/machine/cpuset.effective_cpus", std::string(paths::kCpuOnline)}) {
    auto text = fs.readFile(path);
    if (!text) continue;
    auto cpus = protocol::parseCpuListFile(*text);
    if (!cpus) return cpus.error().withContext(path);
    if (cpus->empty()) continue;
    return VmCpuPool{*cpus, path};
  }
  return Error{"no machine cgroup cpuset and no " + std::string(paths::kCpuOnline)};
}

Expected<std::map<unsigned, CpuTicks>> parsePerCpuTicks(std::string_view procStat) {
  std::map<unsigned, CpuTicks> ticks;
  std::istringstream lines{std::string(procStat)};
  for (std::string line; std::getline(lines, line);) {
    if (line.size() < 4 || line.compare(0, 3, "cpu") != 0 || line[3] < '0' || line[3] > '9') continue;
    std::istringstream fields(line.substr(3));
    unsigned cpu = 0;
    fields >> cpu;
    std::vector<std::uint64_t> values;
    for (std::uint64_t value; fields >> value;) values.push_back(value);
    if (values.size() < 8) return Error{"/proc/stat: short line for cpu" + std::to_string(cpu)};
    CpuTicks& t = ticks[cpu];
    // user nice system idle iowait irq softirq steal [guest guest_nice]: guest
    // time is already inside user and nice, so it is not added again.
    for (std::size_t i = 0; i < 8; ++i) t.total += values[i];
    t.busy = t.total - values[3] - values[4];
  }
  if (ticks.empty()) return Error{"/proc/stat: no per-CPU lines"};
  return ticks;
}

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
