// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/channel_snapshot.h"

namespace vcpufold::hostd {

const char* channelStateName(ChannelState state) {
  switch (state) {
    case ChannelState::Idle:
      return "idle";
    case ChannelState::Connecting:
      return "connecting";
    case ChannelState::WaitingForHello:
      return "waiting-for-hello";
    case ChannelState::Ready:
      return "ready";
    case ChannelState::Penalised:
      return "penalised";
  }
  return "?";
}

}  // namespace vcpufold::hostd
