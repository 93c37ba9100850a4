// SPDX-License-Identifier: GPL-2.0-or-later
#include "host_cpuset.h"

#include <sched.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench_text.h"

namespace vcpufold::bench {

namespace {

namespace fs = std::filesystem;

std::string readLine(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

bool controllerListed(const fs::path& file, const std::string& name) {
  std::ifstream in(file);
  std::string word;
  while (in >> word)
    if (word == name) return true;
  return false;
}

}  // namespace

HostCpuset::HostCpuset(unsigned pcpus) {
  cpu_set_t affinity;
  CPU_ZERO(&affinity);
  ::sched_getaffinity(0, sizeof affinity, &affinity);
  std::vector<unsigned> mine;
  for (unsigned cpu = 0; cpu < CPU_SETSIZE && mine.size() < pcpus; ++cpu)
    if (CPU_ISSET(cpu, &affinity)) mine.push_back(cpu);
  if (mine.size() < pcpus) {
    error_ = "the scenario wants " + std::to_string(pcpus) + " pCPUs; this process may use " +
             std::to_string(CPU_COUNT(&affinity));
    return;
  }
  std::ostringstream list;
  for (std::size_t i = 0; i < mine.size(); ++i) list << (i ? "," : "") << mine[i];
  cpus_ = list.str();

  const fs::path v2 = "/sys/fs/cgroup";
  const bool isV2 = v2_ = controllerListed(v2 / "cgroup.controllers", "cpuset");
  const fs::path root = isV2 ? v2 : v2 / "cpuset";
  if (!fs::exists(root / "cgroup.procs")) {
    error_ = "no cpuset cgroup controller at " + root.string();
    return;
  }
  if (isV2) writeWholeFile((root / "cgroup.subtree_control").string(), "+cpuset");
  std::error_code ignored;
  // On v2 the VMs' CPU groups (cpu_group.h) are this cgroup's children: made
  // first, they keep it from being removed under them.
  fs::create_directories(root / kCgroup, ignored);
  directory_ = (root / kCgroup).string();
  if (!isV2) writeWholeFile((fs::path(directory_) / "cpuset.mems").string(), readLine(root / "cpuset.mems"));
  if (!writeWholeFile((fs::path(directory_) / "cpuset.cpus").string(), cpus_))
    error_ = directory_ + "/cpuset.cpus: cannot set " + cpus_ + ": " + std::strerror(errno);
}

HostCpuset::~HostCpuset() {
  if (directory_.empty()) return;
  std::error_code ignored;
  fs::remove(directory_, ignored);  // rmdir: empty once the VMs have exited
}

bool HostCpuset::adopt(pid_t pid) const {
  if (!ok()) return false;
  return v2_ || writeWholeFile((fs::path(directory_) / "cgroup.procs").string(), std::to_string(pid));
}

}  // namespace vcpufold::bench
