// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// How a VM's agent stands, for vcpufold_vm_agent_state, `status --json` and
// alerts that tell "never installed" from "broken": no_channel (the VM has no
// vcpufold port), no_agent (the port, no agent has said hello on it),
// not_acknowledging (an agent said hello but has no hint acknowledged, or one
// overdue), penalised (disconnected for its errors), cooperative.

#include "vcpufold/hostd/tick.h"

namespace vcpufold::hostd {

const char* agentStateName(const VmReport& vm);
inline constexpr const char* kAgentStates[] = {"no_channel", "no_agent", "not_acknowledging", "penalised",
                                               "cooperative"};

}  // namespace vcpufold::hostd
