// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A cpuset actuator with its guest's housekeeping steered too
// (housekeeping_steering.h): the inner actuator folds the user tasks, the
// steering the kernel's own work, and both are undone together. Chosen by
// [cpuset] steer_housekeeping in agent.toml.

#include <memory>
#include <optional>
#include <string>

#include "vcpufold/agent/actuator.h"
#include "vcpufold/agent/housekeeping_steering.h"
#include "vcpufold/agent/knob_writer.h"

namespace vcpufold::agent {

// A cpuset actuator with its housekeeping steered: the inner actuator folds
// the user tasks, the steering everything else, both undone together.
class SteeredCpusetActuator final : public Actuator {
 public:
  SteeredCpusetActuator(std::unique_ptr<Actuator> inner, KnobWriter& knobs, std::string cgroupRoot);

  [[nodiscard]] protocol::Actuator kind() const override { return inner_->kind(); }
  Expected<ApplyResult> apply(const CpuSet& cpus, MonotonicTime now) override;
  Expected<ApplyResult> release(MonotonicTime now) override;
  Expected<void> restore() override;
  Expected<ApplyResult> prepare(MonotonicTime now) override { return inner_->prepare(now); }
  // A new fold steers the housekeeping as deferred work, before the inner
  // actuator's own (the cgroups hold the new set at once; parking CPUs and
  // moving IRQs can take seconds on a loaded guest and would keep the answer waiting).
  [[nodiscard]] bool hasDeferredWork() const override {
    return inner_->hasDeferredWork() || steeringPending_.has_value();
  }
  Expected<ApplyResult> doDeferredWork(MonotonicTime now) override;

 private:
  Expected<ApplyResult> steer(const CpuSet& cpus, MonotonicTime now);

  std::unique_ptr<Actuator> inner_;
  HousekeepingSteering steering_;
  const RootedFs& fs_;
  std::optional<CpuSet> applied_;
  std::optional<CpuSet> steeringPending_;  // a fold whose housekeeping is not steered yet
};

}  // namespace vcpufold::agent
