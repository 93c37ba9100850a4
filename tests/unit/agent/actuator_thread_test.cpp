// SPDX-License-Identifier: GPL-2.0-or-later
// ActuatorThread (actuator_thread.h): a change runs on the thread and its
// end is awaited for a bounded time, signalled on an eventfd when it comes
// later (and drained with the outcome, however soon that is taken);
// deferred-work slices run while the actuator has some, and the
// thread is not woken at all while it has none. The actuator here only
// counts, or waits to be let go (the edge under test is the thread).

#include "vcpufold/agent/actuator_thread.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

using namespace vcpufold;
using namespace vcpufold::agent;
using namespace std::chrono_literals;

namespace {

// Work of `slices` slices; counts how often the thread looked for work. An
// apply() waits until `letGo` while `holdApply` is set, as a write the
// guest's kernel makes wait.
class CountingActuator final : public Actuator {
 public:
  [[nodiscard]] protocol::Actuator kind() const override { return protocol::Actuator::Cpuset; }
  Expected<ApplyResult> apply(const CpuSet& cpus, MonotonicTime) override {
    std::unique_lock lock(gate);
    opened.wait(lock, [this] { return !holdApply; });
    ++applies;
    slicesLeft = slicesPerApply;
    return ApplyResult{true, "applied " + std::to_string(cpus.size())};
  }
  Expected<ApplyResult> release(MonotonicTime) override {
    ++releases;
    return ApplyResult{true, "released"};
  }
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
  void letGo() {
    {
      std::lock_guard lock(gate);
      holdApply = false;
    }
    opened.notify_all();
  }

  std::atomic<int> slicesLeft{0};
  std::atomic<int> slicesDone{0};
  std::atomic<int> applies{0};
  std::atomic<int> releases{0};
  int slicesPerApply = 0;
  mutable std::atomic<int> looks{0};
  std::mutex gate;
  std::condition_variable opened;
  bool holdApply = false;
};

// The agent's loop: a slice asked for every sample.
void samples(ActuatorThread& thread, int count) {
  for (int i = 0; i < count; ++i) {
    thread.requestSlice();
    std::this_thread::sleep_for(5ms);
  }
}

bool readable(int fd, int timeoutMs) {
  pollfd polled{fd, POLLIN, 0};
  return ::poll(&polled, 1, timeoutMs) == 1 && (polled.revents & POLLIN);
}

}  // namespace

class ActuatorThreadTest : public ::testing::Test {
 protected:
  CountingActuator actuator;
  std::atomic<int> reports{0};  // called on the thread
  CpuSet reportedFold;
  ActuatorThread thread{actuator, [this](const CpuSet& fold, const Expected<ApplyResult>&) {
                          reportedFold = fold;
                          ++reports;
                        }};
};

TEST_F(ActuatorThreadTest, WithoutWorkTheSamplesDoNotWakeIt) {
  samples(thread, 20);
  thread.stop();
  // One wake-up at start (the preparation may have left work; two looks),
  // and at most one more asked for before that one found nothing; then none:
  // each would be a vCPU the guest does not prefer woken for nothing.
  EXPECT_LE(actuator.looks.load(), 4);
  EXPECT_EQ(reports, 0);
}

TEST_F(ActuatorThreadTest, AChangeLeavingWorkRunsASliceASampleUntilDoneThenRests) {
  samples(thread, 3);
  actuator.slicesPerApply = 3;
  thread.startChange(CpuSet{0}, false);
  auto ended = thread.awaitChange(5000ms);
  ASSERT_TRUE(ended);
  ASSERT_TRUE(*ended);
  EXPECT_EQ((*ended)->detail, "applied 1");
  EXPECT_FALSE(thread.changeRunning());
  for (int i = 0; i < 400 && actuator.slicesDone < 3; ++i) samples(thread, 1);
  samples(thread, 20);  // a slice asked for before the last one found none
  const int looksWhenDone = actuator.looks.load();
  samples(thread, 20);
  thread.stop();
  EXPECT_EQ(actuator.slicesDone, 3);
  EXPECT_EQ(actuator.slicesLeft, 0);
  EXPECT_EQ(reports, 3);
  EXPECT_EQ(reportedFold, CpuSet{0}) << "a slice is reported with the fold that left it";
  EXPECT_EQ(actuator.looks.load(), looksWhenDone) << "woken again after the work was done";
}

TEST_F(ActuatorThreadTest, AChangeTheKernelHoldsUpIsAwaitedNoLongerThanAskedAndItsEndIsSignalled) {
  actuator.holdApply = true;
  thread.startChange(CpuSet{0, 1}, false);
  const auto asked = std::chrono::steady_clock::now();
  EXPECT_FALSE(thread.awaitChange(200ms)) << "an outcome before the write was made";
  const auto waited = std::chrono::steady_clock::now() - asked;
  EXPECT_GE(waited, 200ms);
  EXPECT_LT(waited, 2000ms);
  EXPECT_TRUE(thread.changeRunning());
  EXPECT_TRUE(thread.busy());
  ASSERT_GE(thread.changeDoneFd(), 0);
  EXPECT_FALSE(readable(thread.changeDoneFd(), 0));

  actuator.letGo();
  ASSERT_TRUE(readable(thread.changeDoneFd(), 5000)) << "the end of the change was not signalled";
  auto ended = thread.awaitChange(0ms);
  ASSERT_TRUE(ended);
  EXPECT_EQ((*ended)->detail, "applied 2");
  EXPECT_FALSE(thread.changeRunning());
  EXPECT_FALSE(readable(thread.changeDoneFd(), 0)) << "still readable once the outcome was taken";
  EXPECT_FALSE(thread.awaitChange(0ms)) << "one change, one outcome";

  thread.startChange(CpuSet::range(0, 3), true);
  ended = thread.awaitChange(5000ms);
  ASSERT_TRUE(ended);
  EXPECT_EQ((*ended)->detail, "released");
  EXPECT_EQ(actuator.releases, 1);
  EXPECT_EQ(actuator.applies, 1);
}

TEST_F(ActuatorThreadTest, StopWaitsForAChangeTheKernelHoldsUp) {
  actuator.holdApply = true;
  thread.startChange(CpuSet{0}, false);
  ASSERT_FALSE(thread.awaitChange(100ms));
  std::thread letter([this] {
    std::this_thread::sleep_for(300ms);
    actuator.letGo();
  });
  thread.stop();  // returns once the write is made: nothing folds after the agent's unfold
  EXPECT_EQ(actuator.applies, 1);
  letter.join();
}

TEST_F(ActuatorThreadTest, AnOutcomeTakenTheMomentItIsPublishedLeavesNothingToReadOnTheEventfd) {
  // The agent's loop polls changeDoneFd(): readable after an outcome was
  // taken, it would return at once forever and spin on its vCPU. Taking the
  // outcome as soon as it can be seen (a loop polling awaitChange(0), as a
  // woken loop does on the CPU the thread ran on) must find the signal made.
  ASSERT_GE(thread.changeDoneFd(), 0);
  int leftReadable = 0;
  for (int change = 0; change < 1000; ++change) {
    thread.startChange(CpuSet{0}, false);
    std::optional<Expected<ApplyResult>> ended;
    const auto giveUp = std::chrono::steady_clock::now() + 5s;
    while (!(ended = thread.awaitChange(0ms)) && std::chrono::steady_clock::now() < giveUp) {
    }
    ASSERT_TRUE(ended) << "change " << change << " did not end";
    // Time for a signal still on its way to land.
    if (readable(thread.changeDoneFd(), 2)) {
      ++leftReadable;
      std::uint64_t count = 0;
      ASSERT_EQ(::read(thread.changeDoneFd(), &count, sizeof count), static_cast<ssize_t>(sizeof count));
    }
  }
  EXPECT_EQ(leftReadable, 0) << "changes whose end stayed signalled after their outcome was taken";
}
