// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The pCPUs a scenario's VMs share: a cpuset cgroup the bench creates
// (cgroup v2 /sys/fs/cgroup/vcpufold-bench, or v1
// /sys/fs/cgroup/cpuset/vcpufold-bench) holding the first N CPUs this process
// may run on. The VMs go into it, and hostd reads its pool from it
// (inventory.pool_cgroup = "vcpufold-bench"), so both see the same set on a
// machine of any size.

#include <sys/types.h>

#include <string>
#include <vector>

namespace vcpufold::bench {

class HostCpuset {
 public:
  static constexpr const char* kCgroup = "vcpufold-bench";

  // error() says why when the set could not be made (not root, no cpuset
  // controller, fewer CPUs than asked for).
  explicit HostCpuset(unsigned pcpus);
  ~HostCpuset();
  HostCpuset(const HostCpuset&) = delete;
  HostCpuset& operator=(const HostCpuset&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  const std::string& cpus() const { return cpus_; }  // "0-1"
  // v1: moves the process into the set. v2: nothing to do, as long as the
  // process is in its CPU group (cpu_group.h), a child of this cgroup.
  bool adopt(pid_t pid) const;

 private:
  bool v2_ = false;
  std::string directory_;
  std::string cpus_;
  std::string error_;
};

}  // namespace vcpufold::bench
