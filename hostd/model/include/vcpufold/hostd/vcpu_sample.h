// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Per-vCPU counters and what one tick of them means. Sources:
//   libvirt:   vcpu.<n>.time and vcpu.<n>.delay (ns) of virConnectGetAllDomainStats
//   schedstat: /proc/<pid>/task/<tid>/schedstat of a vCPU thread: "run_ns wait_ns slices"
// Both are the host scheduler's own accounting: run time, and time runnable
// but waiting for a pCPU (what the guest sees as steal).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vcpufold/common/expected.h"

namespace vcpufold::hostd {

struct VcpuCounters {
  std::uint64_t runNs = 0;
  std::uint64_t delayNs = 0;
  friend bool operator==(const VcpuCounters&, const VcpuCounters&) = default;
};

struct VmSample {
  std::vector<VcpuCounters> vcpus;  // index = vCPU number
  std::int64_t monotonicNs = 0;     // when it was taken
  // CPU time of the whole VM: every thread of its QEMU (vCPUs, emulator, I/O
  // threads) and, with libvirt, the vhost workers in its cgroup. None: not read.
  std::optional<std::uint64_t> processRunNs;
};

// From libvirt's typed parameters (name, value): needs vcpu.current and, for
// every vCPU below it, vcpu.<n>.time and vcpu.<n>.delay.
Expected<std::vector<VcpuCounters>> vcpuCountersFromStats(
    const std::vector<std::pair<std::string, std::uint64_t>>& params);

Expected<VcpuCounters> parseSchedstat(std::string_view text);

// One tick of a VM: how many vCPUs wanted to run (run + delay, in CPUs),
// how many ran, and the share of their wanting time spent waiting.
struct VmLoad {
  double demandCpus = 0.0;  // sum over vCPUs of (run + delay) / elapsed
  double runCpus = 0.0;     // sum over vCPUs of run / elapsed
  double delayCpus = 0.0;   // sum over vCPUs of delay / elapsed
  double delayRatio = 0.0;  // delay / (run + delay), 0 when idle
  // The VM's threads other than its vCPUs (QEMU's emulator and I/O threads,
  // vhost): CPUs over the tick, 0 when not known. The VM's own load, not the
  // host's: a guest that keeps them busy pays for it from its own share.
  double otherRunCpus = 0.0;
};

// nullopt when the two samples cannot be compared: a counter went backwards
// (the VM restarted) or no time passed; the caller skips that tick for the VM
// instead of reporting a spike. After a vCPU hot-plug or unplug the vCPUs
// both samples have give the load (a new vCPU counts from the next sample),
// and the other threads' share waits for a sample of the same count.
std::optional<VmLoad> deriveLoad(const VmSample& previous, const VmSample& current);

}  // namespace vcpufold::hostd
