// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The latency bench's two set-ups. Each times `repetitions` folds and unfolds
// of one VM caused by its neighbour's demand change and returns the table
// (latency_stages.h); both throw std::runtime_error when they cannot run.
//   emulated  two emulated VMs in the bench's 2-pCPU cpuset (fleet.h)
//   lab       two TCG guests under libvirt (qemu:///system) running the real
//             agent on a real guest kernel, hostd against libvirt; guest
//             times are mapped to the host's clock by a measured offset

#include <string>

#include "fleet.h"

namespace vcpufold::bench {

struct LatencyOptions {
  std::string work;           // run directory: logs
  unsigned repetitions = 30;  // fold and unfold changes to time, each
  unsigned tickMs = 1000;     // hostd's tick and the agents' interval
};

struct LatencyTable {
  std::string text;
  bool bothDirectionsTimed = false;
};

LatencyTable measureEmulatedLatency(const FleetBinaries& binaries, const LatencyOptions& options);
LatencyTable measureLabLatency(const FleetBinaries& binaries, const LatencyOptions& options);

}  // namespace vcpufold::bench
