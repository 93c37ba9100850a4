#include "vcpufold/hostd/cpu_pool.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <vector>

#include "vcpufold/common/system_paths.h"
#include "vcpufold/protocol/cpulist.h"

namespace vcpufold::hostd {

Expected<VmCpuPool> readVmCpuPool(const RootedFs& fs, const std::string& poolCgroup) {
  const std::string root = paths::kCgroupRoot;
  const std::vector<std::string> candidates =
      poolCgroup.empty()
          ? std::vector<std::string>{root + "/machine.slice/cpuset.cpus.effective",
                                     root + "/cpuset/machine.slice/cpuset.effective_cpus",
                                     root + "/cpuset/machine/cpuset.effective_cpus", std::string(paths::kCpuOnline)}
          : std::vector<std::string>{root + "/" + poolCgroup + "/cpuset.cpus.effective",
                                     root + "/cpuset/" + poolCgroup + "/cpuset.effective_cpus"};
  for (const std::string& path : candidates) {
    auto text = fs.readFile(path);
    if (!text) continue;
    auto cpus = protocol::parseCpuListFile(*text);
    if (!cpus) return cpus.error().withContext(path);
    if (cpus->empty()) continue;
    return VmCpuPool{*cpus, path};
  }
  if (!poolCgroup.empty())
    return Error{"inventory.pool_cgroup \"" + poolCgroup + "\": no CPUs in " + candidates[0] + " or " + candidates[1]};
  return Error{"no machine cgroup cpuset and no " + std::string(paths::kCpuOnline)};
}

Expected<std::map<unsigned, CpuTicks>> parsePerCpuTicks(std::string_view procStat) {
  std::map<unsigned, CpuTicks> ticks;
  // Strict: digits only (istream would read "-964" into an unsigned as a huge
  // number), and sums that fit (found by fuzzing).
  const auto number = [](std::string_view word, std::uint64_t& value) {
    const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
    return !word.empty() && error == std::errc() && end == word.data() + word.size();
  };
  while (!procStat.empty()) {
    const auto newline = procStat.find('\n');
    std::string_view line = procStat.substr(0, newline);
    procStat.remove_prefix(newline == std::string_view::npos ? procStat.size() : newline + 1);
    if (line.size() < 4 || line.substr(0, 3) != "cpu" || line[3] < '0' || line[3] > '9') continue;
    std::vector<std::string_view> words;
    for (std::size_t pos = 0; pos < line.size();) {
      const auto start = line.find_first_not_of(' ', pos);
      if (start == std::string_view::npos) break;
      const auto stop = std::min(line.find(' ', start), line.size());
      words.push_back(line.substr(start, stop - start));
      pos = stop;
    }
    std::uint64_t cpuNumber = 0;
    if (!number(words[0].substr(3), cpuNumber) || cpuNumber >= protocol::kMaxCpus)
      return Error{std::string(paths::kProcStat) + ": malformed line \"" + std::string(words[0]) + "\""};
    const auto cpu = static_cast<unsigned>(cpuNumber);
    if (words.size() < 9) return Error{std::string(paths::kProcStat) + ": short line for cpu" + std::to_string(cpu)};
    std::uint64_t values[8] = {};
    CpuTicks t;
    for (std::size_t i = 0; i < 8; ++i) {
      if (!number(words[i + 1], values[i]))
        return Error{std::string(paths::kProcStat) + ": malformed value in cpu" + std::to_string(cpu)};
      // user nice system idle iowait irq softirq steal [guest guest_nice]: guest
      // time is already inside user and nice, so it is not added again.
      if (t.total > UINT64_MAX - values[i])
        return Error{std::string(paths::kProcStat) + ": cpu" + std::to_string(cpu) + " overflows"};
      t.total += values[i];
    }
    t.busy = t.total - values[3] - values[4];
    ticks[cpu] = t;
  }
  if (ticks.empty()) return Error{std::string(paths::kProcStat) + ": no per-CPU lines"};
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
