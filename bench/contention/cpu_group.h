// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A host CPU group per emulated VM with the VM's weight, as libvirt places a
// VM in its own cgroup with <cputune><shares>: cgroup v2 cpu.weight, or v1
// cpu.shares (weight 100 = 1024 shares), whichever controller the host has.

#include <sys/types.h>

#include <string>

namespace vcpufold::bench {

class CpuGroup {
 public:
  // Creates vcpufold-bench/NAME; error() says why when it could not.
  CpuGroup(const std::string& name, double weight);
  ~CpuGroup();
  CpuGroup(const CpuGroup&) = delete;
  CpuGroup& operator=(const CpuGroup&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  // Moves every thread of the process into the group.
  bool adopt(pid_t pid);
  // Moves one thread back out to the root group, where the bench itself runs:
  // for a VM's control thread, which stands for the guest kernel's bookkeeping
  // and the bench's instruments, not for anything that wakes a host thread of
  // a busy KVM guest. cgroup v1 only (v2 keeps a process's threads together
  // outside threaded mode): false, and the thread stays, on v2.
  bool releaseThread(pid_t tid);

 private:
  std::string root_;
  bool v2_ = false;
  std::string directory_;
  std::string error_;
};

}  // namespace vcpufold::bench
