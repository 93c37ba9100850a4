// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The pCPUs VMs may run on, as read from the host (read/cpu_pool.h).

#include <string>

#include "vcpufold/protocol/cpu_set.h"

namespace vcpufold::hostd {

struct VmCpuPool {
  protocol::CpuSet cpus;
  std::string source;  // the file it came from, for --oneshot and logs
};

}  // namespace vcpufold::hostd
