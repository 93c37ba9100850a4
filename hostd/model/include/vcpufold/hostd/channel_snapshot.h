// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// What hostd knows of one VM's channel and agent: written by the channel
// session, read by the decision, status and metrics.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "vcpufold/protocol/messages.h"

namespace vcpufold::hostd {

enum class ChannelState { Idle, Connecting, WaitingForHello, Ready, Penalised };
const char* channelStateName(ChannelState state);

// What the session knows, for allocation, status and metrics.
struct ChannelSnapshot {
  ChannelState state = ChannelState::Idle;
  std::uint32_t version = 0;
  std::optional<protocol::Hello> agentHello;
  std::optional<protocol::Status> lastStatus;            // none until the agent reports on this connection
  std::chrono::steady_clock::time_point lastStatusAt{};  // when lastStatus arrived
  // When the reported demand last moved by a task or more (or was first reported) on this connection.
  std::chrono::steady_clock::time_point lastDemandChangeAt{};
  std::optional<protocol::Ack> lastAck;
  std::optional<std::string> lastAgentError;
  bool cooperative = false;  // ready, and a hint of this connection acknowledged, none overdue
  std::uint64_t framesIn = 0;
  std::uint64_t bytesIn = 0;
  std::uint64_t protocolErrors = 0;
  std::uint64_t connects = 0;
  std::uint64_t hintsSent = 0;
  std::uint64_t penalties = 0;
  std::uint64_t agentErrors = 0;         // error frames the agent sent
  std::uint64_t logLinesSuppressed = 0;  // guest-caused log lines over the budget
};

// Every VM's channel as the control thread saw it, by VM name (hashed: a
// decision looks each VM's up).
using ChannelSnapshots = std::unordered_map<std::string, ChannelSnapshot>;

}  // namespace vcpufold::hostd
