// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// NotifySocket: the service manager's end of sd_notify, for tests. Bind it,
// start the daemon with NOTIFY_SOCKET set to its path (and WATCHDOG_USEC to
// turn the watchdog on), and read what the daemon said and when.

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace vcpufold::testing {

class NotifySocket {
 public:
  using Clock = std::chrono::steady_clock;
  explicit NotifySocket(std::string path);
  ~NotifySocket();
  NotifySocket(const NotifySocket&) = delete;
  NotifySocket& operator=(const NotifySocket&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }
  // Every datagram so far ("READY=1", "WATCHDOG=1", ...) with its arrival time.
  std::vector<std::pair<Clock::time_point, std::string>> messages();
  // How many datagrams contained `text`.
  std::size_t count(const std::string& text);

 private:
  std::string path_;
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<std::pair<Clock::time_point, std::string>> messages_;
  std::thread thread_;
};

}  // namespace vcpufold::testing
