// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The slice of QEMU's monitor (QMP) that hostd's QMP backend uses:
// qmp_capabilities, query-name and query-cpus-fast with the vCPU threads'
// real host thread ids, served on a UNIX socket.

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace vcpufold::bench {

class QmpResponder {
 public:
  using ThreadIds = std::function<std::vector<long>()>;
  using Mute = std::function<bool()>;
  // While mute() holds, commands are read and never answered (a hung QEMU).
  QmpResponder(std::string vmName, ThreadIds threadIds, Mute mute = {})
      : name_(std::move(vmName)), threadIds_(std::move(threadIds)), mute_(std::move(mute)) {}
  ~QmpResponder();

  // Listens on `path` (replacing a stale socket); false with errno set on failure.
  bool listen(const std::string& path);
  void stop();

 private:
  void acceptLoop();
  void serve(int client);

  std::string name_;
  ThreadIds threadIds_;
  Mute mute_;
  std::string path_;
  int listener_ = -1;
  int stopSignal_ = -1;  // an eventfd stop() makes readable
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::vector<std::thread> clients_;
};

}  // namespace vcpufold::bench
