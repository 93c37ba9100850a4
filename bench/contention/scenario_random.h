// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Scenarios nobody wrote: `vcpufold-bench-contention --random N --seed S`
// draws N of them within the bounds below, the same N for the same seed on
// every machine (the draws use mt19937's standard sequence, not the library's
// distributions). Each can be written out as a scenario file that reproduces
// it (scenarioFileText), which is how a loss is reported. Pure.
//
// A draw: 2..6 VMs on 1..maxPcpus pCPUs; each VM 1..16 vCPUs, SMT 1 or 2
// (even vCPUs), weight 25..400 in steps of 25, a workload (compute,
// spinlock, pvspinlock, message) or a mix of two, a schedule (constant, step,
// square or walk; task counts 0..vCPUs + vCPUs/2, steps and square periods
// (3 s or more) at half-second resolution within the window, walks moving
// every 1.5 to 3 s with a seed of their own), and sometimes (1 in 6) no
// agent, though never all. At most 4 distinct demands (the search measures
// each on its own): while there are more, the last VM whose schedule varies
// keeps its first count throughout.

#include <cstdint>
#include <string>
#include <vector>

#include "scenario_file.h"

namespace vcpufold::bench {

struct RandomBounds {
  unsigned minVms = 2, maxVms = 6;
  unsigned maxVcpus = 16;
  unsigned maxPcpus = 2;  // the machine's CPUs the bench may use
  double warmupSeconds = 2.5, durationSeconds = 4, searchSeconds = 30;
};

// Draw `index` (0-based) of seed `seed`: the same whatever N is.
Scenario drawScenario(std::uint32_t seed, unsigned index, const RandomBounds& bounds);
std::vector<Scenario> drawScenarios(unsigned count, std::uint32_t seed, const RandomBounds& bounds);

// The scenario as a file parseScenarioFile reads back to the same scenario
// (one VM table per VM; a schedule's seconds to the millisecond).
std::string scenarioFileText(const Scenario& scenario);

}  // namespace vcpufold::bench
