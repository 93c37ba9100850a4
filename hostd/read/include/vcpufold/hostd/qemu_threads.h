// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// QEMU's vCPU threads of a VM, found from /proc when the inventory backend
// does not name them (libvirt before 7.2 gives vcpu.N.time but no
// vcpu.N.delay, and no thread ids). QEMU names each vCPU thread
// "CPU <index>/<accelerator>" ("CPU 0/KVM", "CPU 3/TCG"); the pid of a
// libvirt domain's QEMU is in /run/libvirt/qemu/<name>.pid.

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vcpufold/common/expected.h"
#include "vcpufold/common/rooted_fs.h"
#include "vcpufold/hostd/vcpu_sample.h"
#include "vcpufold/protocol/cpu_set.h"

namespace vcpufold::hostd {

// The vCPU index a thread name says, or none ("CPU 2/KVM" -> 2).
std::optional<unsigned> vcpuIndexOfThreadName(std::string_view comm);

// Thread ids by vCPU index, from the names of a process's threads (tid -> comm);
// fails unless the indexes run 0..N-1 without a gap.
Expected<std::vector<pid_t>> vcpuThreadsFromNames(const std::map<pid_t, std::string>& comms);

// The pid in a libvirt domain's pid file.
Expected<pid_t> readLibvirtQemuPid(const RootedFs& fs, const std::string& domain);

// The vCPU threads of QEMU process `pid`, by vCPU index, from their names.
Expected<std::vector<pid_t>> findQemuVcpuThreads(const RootedFs& fs, pid_t pid);

// The pCPUs a thread may run on, from its /proc status ("Cpus_allowed_list:").
Expected<protocol::CpuSet> parseCpusAllowedList(std::string_view status);

// Each listed thread's allowed pCPUs, in order: its sched affinity, which
// reflects libvirt's vcpupin and <vcpu cpuset>, taskset, and cgroup cpusets.
Expected<std::vector<protocol::CpuSet>> readThreadAffinities(const RootedFs& fs, pid_t pid,
                                                             const std::vector<pid_t>& threads);

// The run-queue wait so far (ns, cumulative) of QEMU process `pid`'s main
// thread: its main loop, which serves chardevs such as the vcpufold channel
// (and under TCG fires the guest's timers).
Expected<std::uint64_t> readMainThreadRunQueueWaitNs(const RootedFs& fs, pid_t pid);

// Run time and run-queue delay of each vCPU thread of QEMU process `pid`.
Expected<std::vector<VcpuCounters>> sampleQemuVcpuThreads(const RootedFs& fs, pid_t pid);

}  // namespace vcpufold::hostd
