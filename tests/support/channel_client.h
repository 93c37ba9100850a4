// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// ChannelClient: the host end of a vcpufold channel for tests. Connects to a
// UNIX socket (an agent's unix-listen, or QEMU's chardev), sends raw bytes or
// messages, and waits (bounded) for decoded messages.

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "vcpufold/protocol/codec.h"
#include "vcpufold/protocol/frame_decoder.h"

namespace vcpufold::testing {

class ChannelClient {
 public:
  ChannelClient() = default;
  ~ChannelClient();
  ChannelClient(const ChannelClient&) = delete;
  ChannelClient& operator=(const ChannelClient&) = delete;

  // Retries until the socket accepts or timeoutMs passes.
  bool connect(const std::string& path, int timeoutMs);
  void close();
  bool sendRaw(std::string_view bytes);
  bool send(const protocol::Message& message);
  // The next message (skipping none), or nullopt after timeoutMs.
  std::optional<protocol::Message> receive(int timeoutMs);
  // The first message for which accept returns true; others are dropped.
  std::optional<protocol::Message> receiveUntil(const std::function<bool(const protocol::Message&)>& accept,
                                                int timeoutMs);
  template <typename T>
  std::optional<T> receiveType(int timeoutMs) {
    auto message = receiveUntil([](const protocol::Message& m) { return std::holds_alternative<T>(m); }, timeoutMs);
    if (!message) return std::nullopt;
    return std::get<T>(*message);
  }
  // The host's side of the greeting: waits for the agent's hello, answers
  // with a host hello; the agent's hello, or nullopt when none came or the
  // answer could not be sent.
  std::optional<protocol::Hello> greetAgent(int timeoutMs);
  // Frames that did not decode, for tests that expect none.
  [[nodiscard]] int undecodable() const { return undecodable_; }

 private:
  int fd_ = -1;
  protocol::FrameDecoder decoder_;
  int undecodable_ = 0;
};

}  // namespace vcpufold::testing
