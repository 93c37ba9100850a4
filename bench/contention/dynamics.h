// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// How a controller followed the load, from its preferred-count timelines
// against target counts (the clairvoyant's, or best-static's for one phase).
// Pure: timelines in, figures out. Defined so that they can fail:
//
//   settling      after each change of targets (a phase change; not the run's
//                 start, which is the daemons' start-up), the ticks until every VM whose
//                 target moved holds it and keeps it 5 ticks (or to the next
//                 change); folds (target down) and unfolds (target up) apart;
//                 "trivial" when no VM's target moved that way, "not reached"
//                 when the phase ended first.
//   mis-sizing    vCPU-seconds away from the targets, over the window.
//   changes/min   count changes in steady time: the window of the first phase
//                 (after the warm-up), and from 5 ticks after each later phase
//                 change to the next one.
// Only VMs with an agent and with tasks count: nobody sizes the others, and
// an idle VM's count costs nothing.

#include <optional>
#include <string>
#include <vector>

#include "count_timeline.h"
#include "scenario_file.h"

namespace vcpufold::bench {

struct Settling {
  enum class Kind { Trivial, Reached, NotReached };
  Kind kind = Kind::Trivial;
  double ticks = 0;  // Reached: from the change to the first tick of holding
};

struct Dynamics {
  std::vector<Settling> folds, unfolds;  // one per phase change, in order
  double misSizingVcpuSeconds = 0;
  std::optional<double> steadyChangesPerMinute;  // none when no steady time
};

// targets: the target counts of each phase (phases[i].from on; the first also in the warm-up).
Dynamics analyseDynamics(const Scenario& scenario, const std::vector<CountTimeline>& preferred,
                         const std::vector<std::vector<unsigned>>& targets, double warmupSeconds, double tickSeconds);

}  // namespace vcpufold::bench
