// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The kernel actuator: writes the preferred CPUs through the guest kernel's
// writable /sys/devices/system/cpu/preferred (kernel-patches/ provides it;
// upstream's file is read-only). ABI: write a cpulist to set the mask; write
// an empty line to give every active CPU back. The kernel refuses (-EINVAL)
// a set that is empty, not within the active CPUs or without the first
// housekeeping CPU, and changes nothing then.

#include "vcpufold/agent/actuator.h"
#include "vcpufold/agent/knob_writer.h"

namespace vcpufold::agent {

class KernelActuator final : public Actuator {
 public:
  explicit KernelActuator(KnobWriter& knobs) : knobs_(knobs) {}

  // The file exists and is writable (mode 0644, not upstream's 0444).
  static bool isAvailable(const RootedFs& fs);

  [[nodiscard]] protocol::Actuator kind() const override { return protocol::Actuator::Kernel; }
  Expected<ApplyResult> apply(const CpuSet& cpus, MonotonicTime now) override;
  Expected<ApplyResult> release(MonotonicTime now) override;
  Expected<void> restore() override;

 private:
  KnobWriter& knobs_;
  bool released_ = false;  // our last write gave every CPU back
};

}  // namespace vcpufold::agent
