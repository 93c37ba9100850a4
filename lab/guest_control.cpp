// SPDX-License-Identifier: GPL-2.0-or-later
#include "guest_control.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "unix_socket.h"

namespace vcpufold::testing {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

bool readUntilMarker(int fd, std::string& buffer, const std::string& marker, Clock::time_point deadline) {
  for (;;) {
    const auto at = buffer.find(marker);
    if (at != std::string::npos && buffer.find('\n', at) != std::string::npos) return true;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
    char chunk[4096];
    const ssize_t got = ::recv(fd, chunk, sizeof chunk, 0);
    if (got <= 0) return false;
    buffer.append(chunk, static_cast<std::size_t>(got));
  }
}

GuestControl::~GuestControl() { reset(); }

void GuestControl::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  buffer_.clear();
}

std::optional<GuestControl::Result> GuestControl::run(const std::string& command, int timeoutMs) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
  while (fd_ < 0) {
    if (Clock::now() >= deadline) return std::nullopt;
    fd_ = connectUnixSocket(socketPath_);
    if (fd_ < 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    buffer_.clear();
    if (!readUntilMarker(fd_, buffer_, "@@READY", deadline)) {
      reset();
      return std::nullopt;
    }
    buffer_.clear();
  }
  const std::string line = command + "\n";
  if (::send(fd_, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size()) ||
      !readUntilMarker(fd_, buffer_, "@@DONE", deadline)) {
    reset();  // the next command starts on a fresh connection
    return std::nullopt;
  }
  const auto done = buffer_.rfind("@@DONE");
  const auto end = buffer_.find('\n', done);
  Result result{std::atoi(buffer_.c_str() + done + 7), buffer_.substr(0, done)};
  buffer_.erase(0, end + 1);
  return result;
}

bool GuestControl::waitReady(int timeoutMs) {
  const auto result = run("true", timeoutMs);
  return result && result->status == 0;
}

}  // namespace vcpufold::testing
