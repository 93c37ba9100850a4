// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/agent_state.h"

namespace vcpufold::hostd {

const char* agentStateName(const VmReport& vm) {
  const ChannelSnapshot& channel = vm.channel;
  if (!vm.record.channelSocket) return "no_channel";
  if (channel.state == ChannelState::Penalised) return "penalised";
  if (channel.cooperative) return "cooperative";
  if (channel.agentHello && channel.state == ChannelState::Ready) return "not_acknowledging";
  return "no_agent";
}

}  // namespace vcpufold::hostd
