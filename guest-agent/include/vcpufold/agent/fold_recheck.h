// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// When the fold in force is applied again in full. Every interval and every
// hint (a lease renewed) asks for the same fold again; applying it in full
// re-reads every cgroup, IRQ and the workqueue mask to put back what someone
// else changed. On a folded guest the agent runs on a vCPU the guest does not
// prefer, where each such pass is time the host must find, so after a pass
// that found everything in place the next one waits `quietFor` (ten
// intervals); a pass that had to write (or failed) is followed by another at
// the next ask. Another fold, or another control, is always applied at once.
// What someone else changes meanwhile (a new cgroup, a root task, an IRQ's
// affinity) stays as they left it for up to `quietFor`: less folded, never
// more. Pure: times in, decisions out.

#include <chrono>
#include <optional>

#include "vcpufold/common/monotonic_clock.h"
#include "vcpufold/protocol/cpu_set.h"
#include "vcpufold/protocol/messages.h"

namespace vcpufold::agent {

class FoldRecheck {
 public:
  // Whether applying `cpus` under `control` at `now` must go to the actuator:
  // false only for the fold a quiet pass found in place less than quietFor ago.
  [[nodiscard]] bool due(const protocol::CpuSet& cpus, protocol::Control control, MonotonicTime now,
                         std::chrono::milliseconds quietFor) const;
  // A pass of the actuator applied `cpus` under `control` at `now`; quiet when
  // it wrote nothing.
  void applied(const protocol::CpuSet& cpus, protocol::Control control, MonotonicTime now, bool quiet);
  // A pass failed, or the ground changed (CPU hotplug, a reload): the next ask goes to the actuator.
  void forget() { quietPass_.reset(); }

 private:
  struct QuietPass {
    protocol::CpuSet cpus;
    protocol::Control control;
    MonotonicTime at;
  };
  std::optional<QuietPass> quietPass_;
};

}  // namespace vcpufold::agent
