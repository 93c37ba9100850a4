// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/steered_cpuset_actuator.h"

#include <utility>

#include "vcpufold/common/system_paths.h"
#include "vcpufold/protocol/cpulist.h"

namespace vcpufold::agent {

SteeredCpusetActuator::SteeredCpusetActuator(std::unique_ptr<Actuator> inner, KnobWriter& knobs, std::string cgroupRoot)
    : inner_(std::move(inner)), steering_(knobs, std::move(cgroupRoot)), fs_(knobs.fs()) {}

Expected<ApplyResult> SteeredCpusetActuator::steer(const CpuSet& cpus, MonotonicTime now) {
  auto onlineText = fs_.readFile(paths::kCpuOnline);
  auto online = onlineText ? protocol::parseCpuListFile(*onlineText) : Expected<CpuSet>(onlineText.error());
  if (!online) return online.error().withContext("read online CPUs");
  auto steered = steering_.apply(cpus, *online, now);
  if (!steered) return steered.error().withContext("housekeeping");
  return steered;
}

Expected<ApplyResult> SteeredCpusetActuator::apply(const CpuSet& cpus, MonotonicTime now) {
  const bool newFold = !applied_ || *applied_ != cpus;
  // The parked CPUs are exclusive to their partition: it goes before the
  // inner actuator writes another set into the other cgroups.
  if (applied_ && *applied_ != cpus)
    if (auto unparked = steering_.unpark(); !unparked) return unparked.error().withContext("unpark");
  auto folded = inner_->apply(cpus, now);
  if (!folded) return folded;
  applied_ = cpus;
  if (newFold || steeringPending_) {
    steeringPending_ = cpus;  // after the answer (doDeferredWork)
    return folded;
  }
  // The same fold again (every interval): read-compare-write, nothing to wait for.
  auto steered = steer(cpus, now);
  if (!steered) return steered;
  ApplyResult result = *folded;
  result.changed = result.changed || steered->changed;
  if (!steered->detail.empty()) result.detail += (result.detail.empty() ? "" : "; ") + steered->detail;
  return result;
}

Expected<ApplyResult> SteeredCpusetActuator::doDeferredWork(MonotonicTime now) {
  // The housekeeping first: one pass of a few writes, where the root tasks'
  // moves may go on as long as tasks keep being born in the root cgroup.
  if (steeringPending_) {
    const CpuSet cpus = *std::exchange(steeringPending_, std::nullopt);
    return steer(cpus, now);
  }
  return inner_->doDeferredWork(now);
}

Expected<ApplyResult> SteeredCpusetActuator::release(MonotonicTime now) {
  applied_.reset();
  steeringPending_.reset();
  auto steered = steering_.release();
  auto released = inner_->release(now);
  if (!steered) return steered.error().withContext("housekeeping");
  if (!released) return released;
  ApplyResult result = *released;
  result.changed = result.changed || steered->changed;
  if (!steered->detail.empty()) result.detail += (result.detail.empty() ? "" : "; ") + steered->detail;
  return result;
}

Expected<void> SteeredCpusetActuator::restore() {
  applied_.reset();
  steeringPending_.reset();
  auto steered = steering_.release();
  auto restored = inner_->restore();
  if (!steered) return steered.error().withContext("housekeeping");
  return restored;
}

}  // namespace vcpufold::agent
