// SPDX-License-Identifier: GPL-2.0-or-later
#include "file_write_watch.h"

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <thread>

namespace vcpufold::bench {

FileWriteWatch::FileWriteWatch(std::vector<std::string> paths)
    : descriptor_(inotify_init1(IN_NONBLOCK | IN_CLOEXEC)), paths_(std::move(paths)), watches_(paths_.size(), -1) {
  rewatch();
}

FileWriteWatch::~FileWriteWatch() {
  if (descriptor_ >= 0) ::close(descriptor_);
}

void FileWriteWatch::rewatch() {
  if (descriptor_ < 0) return;
  for (std::size_t i = 0; i < paths_.size(); ++i)
    if (watches_[i] < 0)
      // IN_CLOSE_WRITE, not IN_MODIFY: an in-place rewrite truncates first,
      // and a reader woken then would see an empty file.
      watches_[i] = inotify_add_watch(descriptor_, paths_[i].c_str(), IN_CLOSE_WRITE);
}

bool FileWriteWatch::waitForWrite(std::chrono::steady_clock::time_point deadline) {
  if (descriptor_ < 0) {
    std::this_thread::sleep_until(deadline);
    ++wakeups_;
    return false;
  }
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return false;
    pollfd ready{descriptor_, POLLIN, 0};
    const int polled = ::poll(&ready, 1, static_cast<int>(std::min<long long>(left, 60'000)));
    ++wakeups_;
    if (polled < 0) {
      // A signal: back to the caller, which may be stopping.
      if (errno == EINTR) return false;
      std::this_thread::sleep_until(deadline);
      return false;
    }
    if (polled == 0) continue;
    alignas(inotify_event) std::array<char, 4096> buffer{};
    bool written = false;
    for (ssize_t got; (got = ::read(descriptor_, buffer.data(), buffer.size())) > 0;)
      for (ssize_t at = 0; at < got;) {
        const auto* event = reinterpret_cast<const inotify_event*>(buffer.data() + at);
        if (event->mask & IN_CLOSE_WRITE) written = true;
        // The file was removed or replaced: its watch is gone; rewatch() adds
        // one for whatever file then has the path.
        if (event->mask & IN_IGNORED) std::replace(watches_.begin(), watches_.end(), event->wd, -1);
        at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      }
    if (written) return true;
  }
}

}  // namespace vcpufold::bench
