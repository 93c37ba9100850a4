// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/deferred_work_thread.h"

#include "vcpufold/common/monotonic_clock.h"

namespace vcpufold::agent {

DeferredWorkThread::DeferredWorkThread(Actuator& actuator, std::mutex& actuatorMutex, Report report)
    : actuator_(actuator), actuatorMutex_(actuatorMutex), report_(std::move(report)), thread_([this] { run(); }) {}

DeferredWorkThread::~DeferredWorkThread() { stop(); }

void DeferredWorkThread::requestSlice() {
  {
    std::lock_guard lock(wakeMutex_);
    sliceWanted_ = true;
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
    {
      std::unique_lock lock(wakeMutex_);
      wake_.wait(lock, [this] { return sliceWanted_ || stopping_; });
      if (stopping_) return;
      sliceWanted_ = false;
    }
    std::lock_guard actuatorLock(actuatorMutex_);
    if (!actuator_.hasDeferredWork()) continue;
    report_(actuator_.doDeferredWork(monotonicNow()));
  }
}

}  // namespace vcpufold::agent
