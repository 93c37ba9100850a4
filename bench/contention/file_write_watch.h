// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Wakes the emulated VM's control thread when a file it follows is written
// (inotify IN_CLOSE_WRITE), so the thread can sleep between events instead of
// polling: a thread in the VM's CPU group that wakes every few milliseconds
// upsets the host's weighted split between the VMs' groups, which a KVM guest
// that only computes does not do.
//
// The writers this follows (the bench's task count, the agent's preferred
// file) rewrite the file in place. A file that does not exist yet, or is
// replaced or removed, is watched again by rewatch(); the caller still reads
// its files at its periodic step, so a missed event delays, never loses, a
// change.

#include <chrono>
#include <string>
#include <vector>

namespace vcpufold::bench {

class FileWriteWatch {
 public:
  explicit FileWriteWatch(std::vector<std::string> paths);
  ~FileWriteWatch();
  FileWriteWatch(const FileWriteWatch&) = delete;
  FileWriteWatch& operator=(const FileWriteWatch&) = delete;

  // Watches each path not watched yet that exists now.
  void rewatch();

  // Sleeps until a watched file is closed after a write (true) or until
  // `deadline` (false). Without inotify it only sleeps.
  bool waitForWrite(std::chrono::steady_clock::time_point deadline);

  // How many times a sleep in waitForWrite has ended (a write, the deadline,
  // a signal): the thread's own count of its wake-ups, which the machine's
  // load does not change, unlike the kernel's count of its voluntary switches
  // (a write to a busy filesystem sleeps too).
  unsigned long long wakeups() const { return wakeups_; }

 private:
  int descriptor_ = -1;
  std::vector<std::string> paths_;
  std::vector<int> watches_;  // per path; -1: not watched
  unsigned long long wakeups_ = 0;
};

}  // namespace vcpufold::bench
