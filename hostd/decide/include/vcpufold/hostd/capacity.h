#pragma once
// What of the pool is left for VMs: the host's busy time per CPU against the
// VMs' own run time.

#include <map>

#include "vcpufold/common/proc_stat.h"
#include "vcpufold/protocol/cpu_set.h"

namespace vcpufold::hostd {

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
