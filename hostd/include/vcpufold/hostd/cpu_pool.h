#pragma once
// The pCPUs VMs may run on, and what of them is left for VMs.

#include <cstdint>
#include <map>
#include <string>

#include "vcpufold/common/expected.h"
#include "vcpufold/common/proc_stat.h"
#include "vcpufold/common/rooted_fs.h"
#include "vcpufold/protocol/cpu_set.h"

namespace vcpufold::hostd {

struct VmCpuPool {
  protocol::CpuSet cpus;
  std::string source;  // the file it came from, for --oneshot and logs
};

// With no cgroup named: the effective cpuset of libvirt's machine cgroup:
// cgroup v2 machine.slice/cpuset.cpus.effective, or v1 cpuset/machine.slice or
// cpuset/machine (without systemd) cpuset.effective_cpus; else the online CPUs.
// With one named (inventory.pool_cgroup, relative to the cgroup root, e.g.
// Proxmox's "qemu.slice"): that cgroup's effective cpuset, v2 or v1, and an
// error when neither can be read: a pool that is not there is not guessed.
Expected<VmCpuPool> readVmCpuPool(const RootedFs& fs, const std::string& poolCgroup = "");

// CPUs' worth of busy time on `pool` between two readings.
double busyCpus(const std::map<unsigned, CpuTicks>& previous, const std::map<unsigned, CpuTicks>& current,
                const protocol::CpuSet& pool);

struct CapacityInputs {
  double poolCpus = 0;      // size of the VM pool
  double reserveCpus = 0;   // configured host reserve
  double hostBusyCpus = 0;  // busy time on the pool this tick
  double vmRunCpus = 0;     // run time of all vCPUs this tick
};
// pool - reserve - (host busy - VM run), never below zero. Guest time is part
// of the host's busy time, so what is left after VMs is the non-VM load.
double vmCapacity(const CapacityInputs& inputs);

}  // namespace vcpufold::hostd
