// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Every system path vcpufold reads or writes, as on a live machine. They are
// resolved through RootedFs; no other product source names an OS path
// (tests/unit/common/system_paths_test.cpp fails when one does).

#include <cstddef>

namespace vcpufold::paths {

// The longest path a UNIX socket may have: sockaddr_un's sun_path less its NUL.
inline constexpr std::size_t kMaxSocketPath = 107;

inline constexpr const char* kProcStat = "/proc/stat";
inline constexpr const char* kProcLoadavg = "/proc/loadavg";
inline constexpr const char* kProcOsRelease = "/proc/sys/kernel/osrelease";  // the running kernel release
inline constexpr const char* kProcPressureCpu = "/proc/pressure/cpu";
inline constexpr const char* kProcCpuinfo = "/proc/cpuinfo";
inline constexpr const char* kProcMountinfo = "/proc/self/mountinfo";
inline constexpr const char* kProcSelfCgroup = "/proc/self/cgroup";  // "0::/PATH" on cgroup v2
inline constexpr const char* kProcDir = "/proc";
inline constexpr const char* kProcIrqDir = "/proc/irq";  // N/smp_affinity_list of every IRQ
// The CPUs unbound workqueues may run on (a hex CPU mask).
inline constexpr const char* kWorkqueueCpumask = "/sys/devices/virtual/workqueue/cpumask";

inline constexpr const char* kCpuDir = "/sys/devices/system/cpu";
inline constexpr const char* kCpuOnline = "/sys/devices/system/cpu/online";
inline constexpr const char* kCpuPossible = "/sys/devices/system/cpu/possible";
inline constexpr const char* kCpuIsolated = "/sys/devices/system/cpu/isolated";
inline constexpr const char* kCpuNohzFull = "/sys/devices/system/cpu/nohz_full";
inline constexpr const char* kCpuPreferred = "/sys/devices/system/cpu/preferred";
inline constexpr const char* kNodeDir = "/sys/devices/system/node";
inline constexpr const char* kHypervisorType = "/sys/hypervisor/type";
inline constexpr const char* kXenCapabilities = "/proc/xen/capabilities";
inline constexpr const char* kDmiSysVendor = "/sys/class/dmi/id/sys_vendor";

inline constexpr const char* kVirtioPortsDir = "/sys/class/virtio-ports";
inline constexpr const char* kDevDir = "/dev";

inline constexpr const char* kCgroupRoot = "/sys/fs/cgroup";

inline constexpr const char* kLibvirtQemuRunDir = "/run/libvirt/qemu";  // <domain>.pid of each running QEMU

inline constexpr const char* kAgentStateDir = "/run/vcpufold";
inline constexpr const char* kAgentConfig = "/etc/vcpufold/agent.toml";
// What the cpuset actuators folded, so that a restart (or --restore) can undo it.
inline constexpr const char* kCpusetStateFile = "/run/vcpufold/cpuset-state.json";
// The top-level cgroups the cpuset actuator handed back at every CPU because the
// kernel would not empty a populated cgroup's cpuset.cpus: still the agent's to
// fold while they hold exactly that.
inline constexpr const char* kCpusetHandedBackFile = "/run/vcpufold/cpuset-handed-back.json";
inline constexpr const char* kSystemdStateFile = "/run/vcpufold/systemd-state.json";
// What the housekeeping steering changed (IRQ affinity, workqueue mask, the parked cgroup).
inline constexpr const char* kHousekeepingStateFile = "/run/vcpufold/housekeeping-state.json";
inline constexpr const char* kSystemdRunDir = "/run/systemd/system";  // exists when systemd is PID 1

inline constexpr const char* kHostdConfig = "/etc/vcpufold/hostd.toml";
inline constexpr const char* kHostdControlSocket = "/run/vcpufold/hostd.sock";

}  // namespace vcpufold::paths
