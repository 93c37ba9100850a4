// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// ActuatorThread: every call into the actuator while the agent runs, on a
// thread of its own, so that the agent's loop goes on reading and answering
// the host however long the guest's kernel makes a write wait.
//
// A change (a fold, an unfold, the same fold checked in full) is what an
// answer is about: the loop starts it and waits for its end a short while
// (AgentDaemon::kAnswerWithin). One still running then is answered with the
// CPUs in force and finished later; its end makes changeDoneFd() readable.
// On a stock 6.1 guest every cpuset write takes a per-CPU rwsem for writing,
// which waits for an RCU grace period: 13-350 ms a write on a TCG guest under
// load, and once 4.5 s inside a fold's answer, long enough for hostd to take
// the agent for a broken one and unfold its guest.
//
// Deferred work (actuator.h) follows a change in slices, one a sample
// (requestSlice), after the answer. Without work the thread is not woken at
// all: a folded guest's agent runs on a vCPU the guest does not prefer, and
// every wake-up there is one the host has to run.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "vcpufold/agent/actuator.h"

namespace vcpufold::agent {

class ActuatorThread {
 public:
  // report: the outcome of every slice of deferred work, with the CPUs of the
  // change that left it; called on this thread.
  using Report = std::function<void(const CpuSet& fold, const Expected<ApplyResult>&)>;
  // Signals the agent handles by signalfd must be blocked before this starts
  // (the thread inherits the mask). The actuator is this thread's alone
  // until stop() returns.
  ActuatorThread(Actuator& actuator, Report report);
  ~ActuatorThread();
  ActuatorThread(const ActuatorThread&) = delete;
  ActuatorThread& operator=(const ActuatorThread&) = delete;

  // Starts a change: the actuator's release() when `release`, else
  // apply(cpus). Only while no change is running (changeRunning() false).
  void startChange(const CpuSet& cpus, bool release);
  // The change's outcome once it has ended, waiting at most `within`;
  // nullopt while it runs (or when none was started). Taking it ends it.
  std::optional<Expected<ApplyResult>> awaitChange(std::chrono::milliseconds within);
  // Started and its outcome not yet taken.
  [[nodiscard]] bool changeRunning() const;
  // Readable once a change has ended, until its outcome is taken; -1 if the
  // eventfd could not be made (then only awaitChange learns of the end).
  [[nodiscard]] int changeDoneFd() const { return doneFd_; }
  // A change or a slice running now, or a change waiting to start.
  [[nodiscard]] bool busy() const;

  // One slice, if the actuator may have deferred work; else nothing, not
  // even a wake-up.
  void requestSlice();
  // The thread sets its own nice to this before its next step (a reload of
  // agent.nice: each thread's nice is its own).
  void setNice(int nice);
  // Waits for a running step to end; the actuator is the caller's again
  // once it returns, and no step runs after it.
  void stop();

 private:
  struct Change {
    CpuSet cpus;
    bool release = false;
  };
  void run();
  void signalDone();
  void drainDone();

  Actuator& actuator_;
  Report report_;
  int doneFd_ = -1;
  mutable std::mutex mutex_;
  std::condition_variable wake_;     // the thread: something to do
  std::condition_variable changed_;  // the loop: a change ended
  std::optional<Change> changeWanted_;
  bool changeStarted_ = false;  // startChange() to the outcome's taking
  std::optional<Expected<ApplyResult>> changeOutcome_;
  bool stepRunning_ = false;
  bool sliceWanted_ = false;
  std::optional<int> niceWanted_;
  bool stopping_ = false;
  // The actuator may have deferred work: set when a change leaves some,
  // cleared by a slice that found none. At start: the actuator's preparation
  // may have left some.
  std::atomic<bool> workMayBePending_{true};
  CpuSet lastChange_;   // this thread's
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace vcpufold::agent
