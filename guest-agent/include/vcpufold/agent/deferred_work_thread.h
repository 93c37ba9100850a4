// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// DeferredWorkThread: an actuator's deferred work (actuator.h) on a thread of
// its own. On a loaded guest one step of it (a cgroup write the kernel makes
// wait, such as making the parked CPUs' partition) can take seconds; on the
// agent's loop that step kept hints unanswered until hostd judged the agent
// overdue. Here the loop goes on reading and answering meanwhile.
//
// The actuator is shared: whoever calls it holds actuatorMutex. The loop asks
// for one slice per sample (requestSlice), so the work is paced as it was on
// the loop; an answer that would change nothing need not wait for a slice
// that is running (AgentDaemon::apply tries the lock). Without work the
// thread is not woken at all: a folded guest's agent runs on a vCPU the guest
// does not prefer, and every wake-up there is one the host has to run.

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "vcpufold/agent/actuator.h"

namespace vcpufold::agent {

class DeferredWorkThread {
 public:
  // report: the outcome of every slice that ran, called on this thread with
  // actuatorMutex held.
  using Report = std::function<void(const Expected<ApplyResult>&)>;
  // Signals the agent handles by signalfd must be blocked before this starts
  // (the thread inherits the mask).
  DeferredWorkThread(Actuator& actuator, std::mutex& actuatorMutex, Report report);
  ~DeferredWorkThread();
  DeferredWorkThread(const DeferredWorkThread&) = delete;
  DeferredWorkThread& operator=(const DeferredWorkThread&) = delete;

  // One slice, if the actuator may have deferred work (workAdded() since the
  // last slice that found none); else nothing, not even a wake-up.
  void requestSlice();
  // Called with actuatorMutex held, after a call that gave the actuator
  // deferred work.
  void workAdded();
  // The thread sets its own nice to this before its next slice (a reload of
  // agent.nice: each thread's nice is its own).
  void setNice(int nice);
  // Waits for a running slice to end; no slice runs after it returns.
  void stop();

 private:
  void run();

  Actuator& actuator_;
  std::mutex& actuatorMutex_;
  Report report_;
  std::mutex wakeMutex_;
  std::condition_variable wake_;
  bool sliceWanted_ = false;
  std::optional<int> niceWanted_;
  bool stopping_ = false;
  // The actuator may have deferred work: set by workAdded() and by a slice
  // that left some, cleared by a slice that found none (both with
  // actuatorMutex held, so a clear never hides work added before it). At
  // start: the actuator's preparation may have left some.
  std::atomic<bool> workMayBePending_{true};
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace vcpufold::agent
