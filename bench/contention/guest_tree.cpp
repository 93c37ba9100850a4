// SPDX-License-Identifier: GPL-2.0-or-later
#include "guest_tree.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace vcpufold::bench {

namespace {

constexpr std::uint64_t kNsPerUserTick = 10'000'000;  // USER_HZ = 100

// "0-3,6" -> bits; false on anything else.
bool parseCpuList(const std::string& text, unsigned limit, std::uint64_t& mask) {
  mask = 0;
  std::stringstream stream(text);
  std::string range;
  while (std::getline(stream, range, ',')) {
    unsigned first = 0, last = 0;
    char dash = 0;
    std::stringstream part(range);
    if (!(part >> first)) return false;
    last = first;
    if (part >> dash) {
      if (dash != '-' || !(part >> last)) return false;
    }
    if (first > last || last >= limit) return false;
    for (unsigned cpu = first; cpu <= last; ++cpu) mask |= 1ull << cpu;
  }
  return true;
}

}  // namespace

ThreadTimes readThreadTimes(long tid) {
  ThreadTimes times;
  std::ifstream file("/proc/self/task/" + std::to_string(tid) + "/schedstat");
  file >> times.runNs >> times.waitNs;
  return times;
}

GuestTree::GuestTree(std::string root, unsigned vcpus)
    : root_(std::move(root)), vcpus_(vcpus), booted_(std::chrono::steady_clock::now()) {}

void GuestTree::publishProcStat(const std::vector<ThreadTimes>& vcpus, unsigned runnableTasks) const {
  const auto uptimeNs = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - booted_).count());
  std::uint64_t userAll = 0, idleAll = 0, stealAll = 0;
  std::ostringstream perCpu;
  for (std::size_t cpu = 0; cpu < vcpus.size(); ++cpu) {
    const auto& times = vcpus[cpu];
    const std::uint64_t busy = times.runNs + times.waitNs;
    const std::uint64_t user = times.runNs / kNsPerUserTick;
    const std::uint64_t steal = times.waitNs / kNsPerUserTick;
    const std::uint64_t idle = (uptimeNs > busy ? uptimeNs - busy : 0) / kNsPerUserTick;
    userAll += user;
    idleAll += idle;
    stealAll += steal;
    perCpu << "cpu" << cpu << ' ' << user << " 0 0 " << idle << " 0 0 0 " << steal << " 0 0\n";
  }
  const std::string path = root_ + "/proc/stat";
  const std::string temporary = path + ".new";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << "cpu  " << userAll << " 0 0 " << idleAll << " 0 0 0 " << stealAll << " 0 0\n"
        << perCpu.str() << "intr 0\nctxt 0\nbtime 0\nprocesses " << vcpus_ << "\nprocs_running " << runnableTasks + 1
        << "\nprocs_blocked 0\n";
  }
  std::rename(temporary.c_str(), path.c_str());
  // The agent samples its runnable tasks from /proc/loadavg (its running
  // count is procs_running's); the load averages are not read.
  const std::string loadavgPath = root_ + "/proc/loadavg";
  const std::string loadavgTemporary = loadavgPath + ".new";
  {
    std::ofstream out(loadavgTemporary, std::ios::trunc);
    const unsigned running = runnableTasks + 1;
    out << "0.00 0.00 0.00 " << running << '/' << std::max(running, vcpus_) << " 1\n";
  }
  std::rename(loadavgTemporary.c_str(), loadavgPath.c_str());
}

std::string GuestTree::preferredPath() const { return root_ + "/sys/devices/system/cpu/preferred"; }

std::optional<std::uint64_t> GuestTree::readPreferred() const {
  std::ifstream file(preferredPath());
  if (!file) return std::nullopt;
  std::string text;
  std::getline(file, text);
  if (text.empty()) return vcpus_ >= 64 ? ~0ull : (1ull << vcpus_) - 1;
  std::uint64_t mask = 0;
  if (!parseCpuList(text, vcpus_, mask) || mask == 0) return std::nullopt;
  return mask;
}

}  // namespace vcpufold::bench
