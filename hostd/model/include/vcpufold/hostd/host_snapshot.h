// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// What one cycle of the inventory thread read from the host, handed to the
// control thread whole: the VMs, their vCPU counters, the CPU pool and the
// per-CPU busy time. Plain values; the reading is in read/ (InventoryWorker).

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vcpufold/common/proc_stat.h"
#include "vcpufold/hostd/vcpu_sample.h"
#include "vcpufold/hostd/vm_cpu_pool.h"
#include "vcpufold/hostd/vm_record.h"
#include "vcpufold/protocol/cpu_set.h"

namespace vcpufold::hostd {

struct HostSnapshot {
  std::uint64_t cycle = 0;
  std::chrono::steady_clock::time_point takenAt{};  // when the cycle finished
  bool inventoryRead = false;                       // the refresh succeeded: records are current
  std::vector<VmRecord> records;                    // the VMs of this refresh (empty when it failed)
  std::map<std::string, VmSample> samples;          // this cycle's vCPU counters, by VM name
  std::optional<VmCpuPool> pool;
  protocol::CpuSet isolatedCpus;                         // isolcpus and nohz_full: not VM capacity
  std::optional<std::map<unsigned, CpuTicks>> cpuTicks;  // per-CPU /proc/stat
  bool cgroupV2 = true;                                  // libvirt's cpu_shares is cpu.weight (v2) or cpu.shares (v1)
  std::vector<std::string> missing;                      // what this cycle could not read, and why
  std::vector<std::string> notes;                        // the backend's log-worthy news
};

}  // namespace vcpufold::hostd
