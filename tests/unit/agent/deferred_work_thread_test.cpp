// SPDX-License-Identifier: GPL-2.0-or-later
// DeferredWorkThread (deferred_work_thread.h): slices run while the actuator
// has deferred work, and the thread is not woken at all while it has none.
// The actuator here only counts (the edge under test is the thread's pacing).

#include "vcpufold/agent/deferred_work_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

using namespace vcpufold;
using namespace vcpufold::agent;

namespace {

// Work of `slices` slices; counts how often the thread looked for work.
class CountingActuator final : public Actuator {
 public:
  [[nodiscard]] protocol::Actuator kind() const override { return protocol::Actuator::Cpuset; }
  Expected<ApplyResult> apply(const CpuSet&, MonotonicTime) override { return ApplyResult{}; }
  Expected<ApplyResult> release(MonotonicTime) override { return ApplyResult{}; }
  Expected<void> restore() override { return {}; }
  [[nodiscard]] bool hasDeferredWork() const override {
    ++looks;
    return slicesLeft > 0;
  }
  Expected<ApplyResult> doDeferredWork(MonotonicTime) override {
    --slicesLeft;
    ++slicesDone;
    return ApplyResult{};
  }

  int slicesLeft = 0;  // guarded by the actuator mutex, as in the agent
  int slicesDone = 0;
  mutable std::atomic<int> looks{0};
};

// The agent's loop: a slice asked for every sample.
void samples(DeferredWorkThread& thread, int count) {
  for (int i = 0; i < count; ++i) {
    thread.requestSlice();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

class DeferredWorkThreadTest : public ::testing::Test {
 protected:
  CountingActuator actuator;
  std::mutex actuatorMutex;
  int reports = 0;  // called on the thread with actuatorMutex held
  DeferredWorkThread thread{actuator, actuatorMutex, [this](const Expected<ApplyResult>&) { ++reports; }};
};

TEST_F(DeferredWorkThreadTest, WithoutWorkTheSamplesDoNotWakeIt) {
  samples(thread, 20);
  thread.stop();
  // One wake-up at start (the preparation may have left work; two looks),
  // and at most one more asked for before that one found nothing; then none:
  // each would be a vCPU the guest does not prefer woken for nothing.
  EXPECT_LE(actuator.looks.load(), 4);
  EXPECT_EQ(reports, 0);
}

TEST_F(DeferredWorkThreadTest, AddedWorkRunsASliceASampleUntilDoneThenRests) {
  samples(thread, 3);
  {
    std::lock_guard lock(actuatorMutex);  // as AgentDaemon::apply does
    actuator.slicesLeft = 3;
    thread.workAdded();
  }
  for (int i = 0; i < 400; ++i) {
    samples(thread, 1);
    std::lock_guard lock(actuatorMutex);
    if (actuator.slicesDone == 3) break;
  }
  samples(thread, 20);  // a slice asked for before the last one found none
  const int looksWhenDone = actuator.looks.load();
  samples(thread, 20);
  thread.stop();
  std::lock_guard lock(actuatorMutex);
  EXPECT_EQ(actuator.slicesDone, 3);
  EXPECT_EQ(actuator.slicesLeft, 0);
  EXPECT_EQ(reports, 3);
  EXPECT_EQ(actuator.looks.load(), looksWhenDone) << "woken again after the work was done";
}
