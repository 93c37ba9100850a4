// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/actuator_thread.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <utility>

#include "vcpufold/agent/own_priority.h"
#include "vcpufold/common/monotonic_clock.h"

namespace vcpufold::agent {

ActuatorThread::ActuatorThread(Actuator& actuator, Report report)
    : actuator_(actuator),
      report_(std::move(report)),
      doneFd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      thread_([this] { run(); }) {}

ActuatorThread::~ActuatorThread() {
  stop();
  if (doneFd_ >= 0) ::close(doneFd_);
}

void ActuatorThread::startChange(const CpuSet& cpus, bool release) {
  {
    std::lock_guard lock(mutex_);
    changeWanted_ = Change{cpus, release};
    changeStarted_ = true;
    changeOutcome_.reset();
  }
  wake_.notify_one();
}

std::optional<Expected<ApplyResult>> ActuatorThread::awaitChange(std::chrono::milliseconds within) {
  std::unique_lock lock(mutex_);
  if (!changeStarted_) return std::nullopt;
  changed_.wait_for(lock, within, [this] { return changeOutcome_.has_value(); });
  if (!changeOutcome_) return std::nullopt;
  auto outcome = std::move(*changeOutcome_);
  changeOutcome_.reset();
  changeStarted_ = false;
  drainDone();
  return outcome;
}

bool ActuatorThread::changeRunning() const {
  std::lock_guard lock(mutex_);
  return changeStarted_;
}

bool ActuatorThread::busy() const {
  std::lock_guard lock(mutex_);
  return stepRunning_ || changeWanted_.has_value();
}

void ActuatorThread::requestSlice() {
  if (!workMayBePending_.load()) return;
  {
    std::lock_guard lock(mutex_);
    sliceWanted_ = true;
  }
  wake_.notify_one();
}

void ActuatorThread::setNice(int nice) {
  {
    std::lock_guard lock(mutex_);
    niceWanted_ = nice;
  }
  wake_.notify_one();
}

void ActuatorThread::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void ActuatorThread::signalDone() {
  if (doneFd_ < 0) return;
  const std::uint64_t one = 1;
  (void)!::write(doneFd_, &one, sizeof one);
}

void ActuatorThread::drainDone() {
  if (doneFd_ < 0) return;
  std::uint64_t count = 0;
  (void)!::read(doneFd_, &count, sizeof count);
}

void ActuatorThread::run() {
  for (;;) {
    std::optional<Change> change;
    std::optional<int> nice;
    bool slice = false;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return changeWanted_ || sliceWanted_ || niceWanted_ || stopping_; });
      if (stopping_) return;
      std::swap(change, changeWanted_);
      std::swap(slice, sliceWanted_);
      std::swap(nice, niceWanted_);
      stepRunning_ = true;
    }
    // Nice is a thread's own on Linux: this thread sets its own; a failure
    // leaves it as it was (the loop's thread reports the same failure).
    if (nice) (void)setOwnNice(*nice);
    if (change) {
      auto outcome =
          change->release ? actuator_.release(monotonicNow()) : actuator_.apply(change->cpus, monotonicNow());
      lastChange_ = change->cpus;
      if (actuator_.hasDeferredWork()) workMayBePending_.store(true);
      {
        std::lock_guard lock(mutex_);
        changeOutcome_ = std::move(outcome);
        stepRunning_ = false;
        // Under the lock, with the outcome: whoever takes the outcome (under
        // the lock) drains the signal with it. Signalled after the unlock, a
        // loop woken at once could take the outcome first, and the eventfd
        // stayed readable with nothing to take: the agent's poll returned at
        // once, over and over, and the agent spun on its vCPU until the next
        // change.
        signalDone();
      }
      changed_.notify_all();
      // A slice asked for with the change runs next, as asked: the pace
      // stays one slice a sample.
      if (slice) requestSlice();
      continue;
    }
    if (slice && actuator_.hasDeferredWork()) report_(lastChange_, actuator_.doDeferredWork(monotonicNow()));
    if (slice) workMayBePending_.store(actuator_.hasDeferredWork());
    std::lock_guard lock(mutex_);
    stepRunning_ = false;
  }
}

}  // namespace vcpufold::agent
