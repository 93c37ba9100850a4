// SPDX-License-Identifier: GPL-2.0-or-later
#include "notify_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

namespace vcpufold::testing {

NotifySocket::NotifySocket(std::string path) : path_(std::move(path)) {
  ::unlink(path_.c_str());
  fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path_.c_str(), sizeof address.sun_path - 1);
  if (fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd_);
    fd_ = -1;
  }
  thread_ = std::thread([this] {
    char buffer[4096];
    while (!stop_ && fd_ >= 0) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) continue;
      std::lock_guard lock(mutex_);
      messages_.emplace_back(Clock::now(), std::string(buffer, static_cast<std::size_t>(n)));
    }
  });
}

NotifySocket::~NotifySocket() {
  stop_ = true;
  thread_.join();
  if (fd_ >= 0) ::close(fd_);
  ::unlink(path_.c_str());
}

std::vector<std::pair<NotifySocket::Clock::time_point, std::string>> NotifySocket::messages() {
  std::lock_guard lock(mutex_);
  return messages_;
}

std::size_t NotifySocket::count(const std::string& text) {
  std::lock_guard lock(mutex_);
  std::size_t found = 0;
  for (const auto& entry : messages_)
    if (entry.second.find(text) != std::string::npos) ++found;
  return found;
}

}  // namespace vcpufold::testing
