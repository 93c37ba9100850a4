// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The agent's own CPU priority. It needs little CPU, but it needs it promptly
// exactly when its guest is folded onto few vCPUs and loaded: an agent that
// waits behind the workload acknowledges hints late, and hostd then counts
// it as not cooperating and hints all vCPUs (safe, but the fold is lost).
// Under systemd the unit's CPUWeight= protects its cgroup; where the agent
// runs in the same cgroup as the load (no systemd, containers, busybox
// guests), only its nice value does.

#include "vcpufold/common/expected.h"

namespace vcpufold::agent {

// Sets this process's nice value (-20..19). Lowering it needs CAP_SYS_NICE.
Expected<void> setOwnNice(int nice);

// The nice value this process runs at now.
int ownNice();

}  // namespace vcpufold::agent
