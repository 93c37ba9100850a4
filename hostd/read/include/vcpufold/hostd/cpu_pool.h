// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Reads the pCPUs VMs may run on.

#include <string>

#include "vcpufold/common/expected.h"
#include "vcpufold/common/rooted_fs.h"
#include "vcpufold/hostd/vm_cpu_pool.h"

namespace vcpufold::hostd {

// With no cgroup named: the effective cpuset of libvirt's machine cgroup:
// cgroup v2 machine.slice/cpuset.cpus.effective, or v1 cpuset/machine.slice or
// cpuset/machine (without systemd) cpuset.effective_cpus; else the online CPUs.
// With one named (inventory.pool_cgroup, relative to the cgroup root, e.g.
// Proxmox's "qemu.slice"): that cgroup's effective cpuset, v2 or v1, and an
// error when neither can be read: a pool that is not there is not guessed.
Expected<VmCpuPool> readVmCpuPool(const RootedFs& fs, const std::string& poolCgroup = "");

}  // namespace vcpufold::hostd
