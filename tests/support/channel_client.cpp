// SPDX-License-Identifier: GPL-2.0-or-later
#include "channel_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "unix_socket.h"
#include "vcpufold/protocol/limits.h"
#include "vcpufold/protocol/version.h"

namespace vcpufold::testing {
namespace {
using Clock = std::chrono::steady_clock;
int remainingMs(Clock::time_point deadline) {
  return static_cast<int>(
      std::max<long>(0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count()));
}
}  // namespace

ChannelClient::~ChannelClient() { close(); }

bool ChannelClient::connect(const std::string& path, int timeoutMs) {
  close();
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
  while (Clock::now() < deadline) {
    fd_ = connectUnixSocket(path);
    if (fd_ >= 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

void ChannelClient::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  decoder_.reset();
}

bool ChannelClient::sendRaw(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (written <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
  return true;
}

bool ChannelClient::send(const protocol::Message& message) {
  auto line = protocol::encodeMessage(message, protocol::kProtocolVersion);
  if (!line) return false;
  // A hello starts with 0xFF, as protocol.md section 3 asks of both sides: the
  // peer discards what it reads after (re)opening up to a newline or 0xFF.
  if (std::holds_alternative<protocol::Hello>(message)) return sendRaw(std::string(1, protocol::kResyncByte) + *line);
  return sendRaw(*line);
}

std::optional<protocol::Hello> ChannelClient::greetAgent(int timeoutMs) {
  auto hello = receiveType<protocol::Hello>(timeoutMs);
  if (!hello || !send(protocol::Hello{protocol::Role::Host, {protocol::kProtocolVersion}, "test-host", std::nullopt}))
    return std::nullopt;
  return hello;
}

std::optional<protocol::Message> ChannelClient::receive(int timeoutMs) {
  return receiveUntil([](const protocol::Message&) { return true; }, timeoutMs);
}

std::optional<protocol::Message> ChannelClient::receiveUntil(
    const std::function<bool(const protocol::Message&)>& accept, int timeoutMs) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
  for (;;) {
    while (auto frame = decoder_.next()) {
      if (frame->kind != protocol::Frame::Kind::Line) continue;
      auto decoded = protocol::decodeMessage(frame->text);
      if (!decoded) {
        ++undecodable_;
        continue;
      }
      if (accept(decoded.value().message)) return decoded.value().message;
    }
    if (fd_ < 0) return std::nullopt;
    pollfd fd{fd_, POLLIN, 0};
    if (::poll(&fd, 1, remainingMs(deadline)) <= 0) return std::nullopt;
    char buffer[8192];
    const ssize_t got = ::recv(fd_, buffer, sizeof buffer, 0);
    if (got <= 0) return std::nullopt;
    decoder_.feed(std::string_view(buffer, static_cast<std::size_t>(got)));
  }
}

}  // namespace vcpufold::testing
