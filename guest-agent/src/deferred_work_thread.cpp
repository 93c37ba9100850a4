// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/deferred_work_thread.h"

#include <optional>
#include <utility>

#include "vcpufold/agent/own_priority.h"
#include "vcpufold/common/monotonic_clock.h"

namespace vcpufold::agent {

DeferredWorkThread::DeferredWorkThread(Actuator& actuator, std::mutex& actuatorMutex, Report report)
    : actuator_(actuator), actuatorMutex_(actuatorMutex), report_(std::move(report)), thread_([this] { run(); }) {}

DeferredWorkThread::~DeferredWorkThread() { stop(); }

void DeferredWorkThread::requestSlice() {
  if (!workMayBePending_.load()) return;
  {
    std::lock_guard lock(wakeMutex_);
    sliceWanted_ = true;
  }
  wake_.notify_one();
}

void DeferredWorkThread::workAdded() { workMayBePending_.store(true); }

void DeferredWorkThread::setNice(int nice) {
  {
    std::lock_guard lock(wakeMutex_);
    niceWanted_ = nice;
  }
  wake_.notify_one();
}

void DeferredWorkThread::stop() {
  {
    std::lock_guard lock(wakeMutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void DeferredWorkThread::run() {
  for (;;) {
    std::optional<int> nice;
    bool slice = false;
    {
      std::unique_lock lock(wakeMutex_);
      wake_.wait(lock, [this] { return sliceWanted_ || niceWanted_ || stopping_; });
      if (stopping_) return;
      std::swap(slice, sliceWanted_);
      std::swap(nice, niceWanted_);
    }
    // Nice is a thread's own on Linux: this thread sets its own; a failure
    // leaves it as it was (the loop's thread reports the same failure).
    if (nice) (void)setOwnNice(*nice);
    if (!slice) continue;
    std::lock_guard actuatorLock(actuatorMutex_);
    if (actuator_.hasDeferredWork()) report_(actuator_.doDeferredWork(monotonicNow()));
    workMayBePending_.store(actuator_.hasDeferredWork());
  }
}

}  // namespace vcpufold::agent
