// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// An actuator makes a CPU set the guest's preferred CPUs. apply() is called
// on every change and again every interval (it must be cheap and idempotent:
// read-compare-write). release() is apply() for "all CPUs": it removes what
// the actuator set rather than writing the full set, so an unfolded guest is
// untouched (and a CPU onlined later is preferred at once); it too runs every
// interval and must cost nothing when there is nothing to remove. restore()
// undoes everything unconditionally, also what a crashed agent left behind.
//
// A fold must be answered promptly even when its guest is loaded: work that
// can take seconds there (moving tasks between cgroups, each waiting for an
// RCU grace period on a flooded CPU; parking CPUs) is left by apply() as
// deferred work, which the agent does in slices of about kDeferredSlice,
// after it has acknowledged the hint. While the agent runs, every call comes
// from one thread of its own (actuator_thread.h), never two at once.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "vcpufold/common/expected.h"
#include "vcpufold/common/monotonic_clock.h"
#include "vcpufold/protocol/cpu_set.h"
#include "vcpufold/protocol/messages.h"

namespace vcpufold::agent {

using protocol::CpuSet;

inline constexpr std::chrono::milliseconds kDeferredSlice{100};

struct ApplyResult {
  bool changed = false;  // something was written
  std::string detail;    // what, for the log
};

class Actuator {
 public:
  virtual ~Actuator() = default;
  [[nodiscard]] virtual protocol::Actuator kind() const = 0;
  virtual Expected<ApplyResult> apply(const CpuSet& cpus, MonotonicTime now) = 0;
  virtual Expected<ApplyResult> release(MonotonicTime now) = 0;
  virtual Expected<void> restore() = 0;
  // Work a first fold would otherwise do inside its answer, done ahead while
  // nothing is folded (the cgroup cpuset actuator enables its controller,
  // which moves every task of the guest): the agent calls it once when it
  // starts, if it may fold. release() keeps it; restore() undoes it.
  virtual Expected<ApplyResult> prepare(MonotonicTime now) {
    (void)now;
    return ApplyResult{};
  }
  // What the last apply() left to do, and one slice of it.
  [[nodiscard]] virtual bool hasDeferredWork() const { return false; }
  virtual Expected<ApplyResult> doDeferredWork(MonotonicTime now) {
    (void)now;
    return ApplyResult{};
  }
};

// Observes and reports only.
class NoneActuator final : public Actuator {
 public:
  [[nodiscard]] protocol::Actuator kind() const override { return protocol::Actuator::None; }
  Expected<ApplyResult> apply(const CpuSet&, MonotonicTime) override { return ApplyResult{}; }
  Expected<ApplyResult> release(MonotonicTime) override { return ApplyResult{}; }
  Expected<void> restore() override { return {}; }
};

}  // namespace vcpufold::agent
