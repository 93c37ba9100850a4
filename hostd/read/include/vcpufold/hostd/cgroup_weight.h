// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A process's CPU weight from its cgroup, for VMs that libvirt does not
// describe (the QMP backend: Proxmox sets a VM's cpuunits as the cpu.weight
// of its qemu.slice/ID.scope). The raw value, in the host's own scale:
// cgroup v2 cpu.weight (default 100), v1 cpu.shares (default 1024);
// effectiveWeight() brings v1 to the v2 scale.

#include <sys/types.h>

#include <optional>
#include <string_view>

#include "vcpufold/common/expected.h"
#include "vcpufold/common/rooted_fs.h"

namespace vcpufold::hostd {

// The cgroup path of the hierarchy that holds the cpu controller, from the
// text of /proc/PID/cgroup: the v2 line ("0::/qemu.slice/100.scope") on a v2
// host, else the v1 line whose controllers include "cpu" ("4:cpu,cpuacct:/x"),
// with its mount directory name ("cpu,cpuacct").
struct CpuCgroup {
  std::string mount;  // "" on v2; the v1 hierarchy's directory under the cgroup root
  std::string path;   // from the hierarchy's root, beginning with '/'
};
Expected<CpuCgroup> parseCpuCgroup(std::string_view procCgroup, bool cgroupV2);

// cpu.weight (v2) or cpu.shares (v1) of the cgroup process `pid` is in.
Expected<double> readProcessCpuWeight(const RootedFs& fs, pid_t pid, bool cgroupV2);

}  // namespace vcpufold::hostd
