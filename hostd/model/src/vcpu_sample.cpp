// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/vcpu_sample.h"

#include <algorithm>

#include <charconv>
#include <map>

namespace vcpufold::hostd {

Expected<std::vector<VcpuCounters>> vcpuCountersFromStats(
    const std::vector<std::pair<std::string, std::uint64_t>>& params) {
  std::map<std::string, std::uint64_t> byName(params.begin(), params.end());
  const auto current = byName.find("vcpu.current");
  if (current == byName.end()) return Error{"no vcpu.current in the domain stats"};
  if (current->second > 4096) return Error{"vcpu.current " + std::to_string(current->second) + " is implausible"};
  std::vector<VcpuCounters> vcpus(current->second);
  for (std::size_t n = 0; n < vcpus.size(); ++n) {
    const std::string prefix = "vcpu." + std::to_string(n) + ".";
    const auto time = byName.find(prefix + "time");
    const auto delay = byName.find(prefix + "delay");
    // vcpu.<n>.delay needs libvirt 7.2 or later.
    if (time == byName.end() || delay == byName.end())
      return Error{"no " + prefix + "time or " + prefix + "delay in the domain stats (libvirt 7.2 or later needed)"};
    vcpus[n] = VcpuCounters{time->second, delay->second};
  }
  return vcpus;
}

Expected<VcpuCounters> parseSchedstat(std::string_view text) {
  VcpuCounters counters;
  const char* cursor = text.data();
  const char* end = text.data() + text.size();
  for (std::uint64_t* field : {&counters.runNs, &counters.delayNs}) {
    while (cursor < end && *cursor == ' ') ++cursor;
    const auto [next, error] = std::from_chars(cursor, end, *field);
    if (error != std::errc()) return Error{"schedstat: expected \"run_ns wait_ns slices\""};
    cursor = next;
  }
  return counters;
}

std::optional<VmLoad> deriveLoad(const VmSample& previous, const VmSample& current) {
  // After a vCPU hot-plug or unplug the vCPUs both samples have still tell
  // the load (a vCPU's counters stay its own); a new vCPU counts from the
  // next sample on, so the change costs no sample.
  const std::size_t common = std::min(previous.vcpus.size(), current.vcpus.size());
  if (common == 0) return std::nullopt;
  const std::int64_t elapsed = current.monotonicNs - previous.monotonicNs;
  if (elapsed <= 0) return std::nullopt;
  double runNs = 0;
  double delayNs = 0;
  for (std::size_t n = 0; n < common; ++n) {
    const auto& a = previous.vcpus[n];
    const auto& b = current.vcpus[n];
    if (b.runNs < a.runNs || b.delayNs < a.delayNs) return std::nullopt;
    runNs += static_cast<double>(b.runNs - a.runNs);
    delayNs += static_cast<double>(b.delayNs - a.delayNs);
  }
  const auto seconds = static_cast<double>(elapsed);
  VmLoad load;
  load.runCpus = runNs / seconds;
  load.delayCpus = delayNs / seconds;
  load.demandCpus = load.runCpus + load.delayCpus;
  load.delayRatio = runNs + delayNs > 0 ? delayNs / (runNs + delayNs) : 0.0;
  if (previous.processRunNs && current.processRunNs && *current.processRunNs >= *previous.processRunNs &&
      previous.vcpus.size() == current.vcpus.size()) {
    const double processNs = static_cast<double>(*current.processRunNs - *previous.processRunNs);
    load.otherRunCpus = std::max(processNs - runNs, 0.0) / seconds;
  }
  return load;
}

}  // namespace vcpufold::hostd
