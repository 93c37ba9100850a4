// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// GuestControl: the host end of the lab guest's control port
// (org.vcpufold.lab.ctl, a test aid): runs shell commands in the guest.
// One connection serves every command: QEMU's chardev takes one client at a
// time, and bytes the guest writes while a reconnect is in flight are lost.

#include <chrono>
#include <optional>
#include <string>

namespace vcpufold::testing {

// Reads from fd into buffer until it holds `marker` and the end of that line,
// or the deadline passes (false).
bool readUntilMarker(int fd, std::string& buffer, const std::string& marker,
                     std::chrono::steady_clock::time_point deadline);

class GuestControl {
 public:
  explicit GuestControl(std::string socketPath) : socketPath_(std::move(socketPath)) {}
  ~GuestControl();
  GuestControl(const GuestControl&) = delete;
  GuestControl& operator=(const GuestControl&) = delete;

  struct Result {
    int status = -1;
    std::string output;
  };
  std::optional<Result> run(const std::string& command, int timeoutMs);
  // Polls until the guest answers.
  bool waitReady(int timeoutMs);
  // Forgets the connection (the guest rebooted).
  void reset();

 private:
  std::string socketPath_;
  int fd_ = -1;
  std::string buffer_;
};

}  // namespace vcpufold::testing
