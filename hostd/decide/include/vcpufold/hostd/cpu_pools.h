// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The host's pCPUs as VMs may use them. Each VM may run on some set of the
// pCPUs (its vCPU threads' affinity, clipped to the VM pool); pCPUs that the
// same VMs may use form a place; places joined by a VM that may use both form
// a pool (a connected part of the VM-to-pCPU graph), decided on its own. VMs
// with no known placement may run anywhere: with none pinned the host is one
// pool, as it always was.
//
// Isolated pCPUs (isolcpus, nohz_full) are not VM capacity, except for a VM
// pinned to isolated pCPUs alone (an operator placed it there on purpose).
// pCPUs no VM may use are in no pool. A VM each of whose vCPUs is pinned to a
// pCPU of its own, shared with no other VM, is dedicated: it is never folded.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vcpufold/hostd/vm_record.h"
#include "vcpufold/protocol/cpu_set.h"

namespace vcpufold::hostd {

struct CpuPool {
  std::string name;  // its pCPUs as a CPU list ("0-3,8"): a pool's name is what it is
  protocol::CpuSet cpus;
  std::vector<std::size_t> places;  // indexes into PoolLayout::places
  std::vector<std::size_t> vms;     // indexes into the VMs given
};

struct PoolLayout {
  std::vector<protocol::CpuSet> places;
  std::vector<CpuPool> pools;
  std::vector<std::size_t> poolOfVm;                 // per VM
  std::vector<std::vector<std::size_t>> placesOfVm;  // per VM: indexes into places
  std::vector<bool> dedicated;                       // per VM
};

// vmPool: the pCPUs VMs may use (the machine cgroup's cpuset); isolated: the
// host's isolcpus and nohz_full pCPUs.
PoolLayout layoutPools(const protocol::CpuSet& vmPool, const protocol::CpuSet& isolated,
                       const std::vector<VcpuPlacement>& placements);
// The same over the VMs' records, without copying their placements (a
// decision between ticks at a thousand VMs must stay cheap).
PoolLayout layoutPools(const protocol::CpuSet& vmPool, const protocol::CpuSet& isolated,
                       const std::vector<VmRecord>& vms);

struct PoolLoad {
  std::map<unsigned, double> cpuBusy;  // per pCPU, CPUs' worth of busy time this tick
  std::optional<double> poolBusyCpus;  // without cpuBusy: the whole VM pool's, spread by size
  std::vector<double> vmRunCpus;       // per VM, its vCPUs' run time this tick
  double reserveCpus = 0;              // kept for the host, spread over the pools by size
  // Each pool's non-VM load last tick, by name: a load counts only once it has
  // lasted two ticks (the smaller of the two).
  std::map<std::string, double> previousNonVmCpus;
};

struct PoolCapacity {
  double busyCpus = 0;                // host busy time on the pool's pCPUs
  double vmRunCpus = 0;               // its VMs' run time
  double measuredNonVmCpus = 0;       // busy - VM run, this tick
  double nonVmCpus = 0;               // what capacity counts
  double reserveCpus = 0;             // its part of the host reserve
  double capacity = 0;                // pCPUs - reserve - non-VM, never below 0
  std::vector<double> placeCapacity;  // per place of the pool, in its places' order
};

// Per pool: the non-VM load (host busy time on its pCPUs less its VMs' run
// time; QEMU's emulator and I/O threads are in it, on the pCPUs they run on),
// charged to its places where the busy time exceeds what its VMs can account
// for, and what is left for VMs.
std::vector<PoolCapacity> poolCapacities(const PoolLayout& layout, const PoolLoad& load);

}  // namespace vcpufold::hostd
