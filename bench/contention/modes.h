// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The contention bench's modes, and the fixed configurations some of them
// apply. Nothing here uses hostd's code: the limits the bench compares
// vcpufold against must not be computed by vcpufold.
//
//   unfolded     no folding: every vCPU preferred
//   steal-law    the agents alone (their steal-time fallback, no hostd)
//   vcpufold     hostd and the agents
//   static-fair  each VM fixed at its weighted share of the pCPUs, rounded up, set once
//   always-1     every VM fixed at one vCPU (a floor that parallelism must beat)
//   best-static  the best fixed counts for the whole run, found by measuring (static_search)
//   clairvoyant  the best fixed counts of each phase, applied the instant it begins

#include <optional>
#include <string>
#include <vector>

namespace vcpufold::bench {

enum class Mode { Unfolded, StealLaw, Vcpufold, StaticFair, AlwaysOne, BestStatic, Clairvoyant };
inline constexpr Mode kAllModes[] = {Mode::Unfolded,  Mode::StealLaw,   Mode::Vcpufold,   Mode::StaticFair,
                                     Mode::AlwaysOne, Mode::BestStatic, Mode::Clairvoyant};
const char* modeName(Mode mode);
std::optional<Mode> modeFromName(const std::string& name);
// Modes run by controllers (agents, hostd) rather than by the bench's fixed counts.
bool isControlled(Mode mode);

// Preferred vCPU counts per VM over a run: `from` seconds into the window
// (the first entry from 0, applied in the warm-up too).
struct FixedPhase {
  double from = 0;
  std::vector<unsigned> sizes;
  friend bool operator==(const FixedPhase&, const FixedPhase&) = default;
};
using FixedPlan = std::vector<FixedPhase>;

// Max-min fair CPU per VM (progressive filling): every VM's share grows with
// its weight until it reaches its demand or the pCPUs run out. Written here,
// independently of hostd's allocation, to judge hostd by.
std::vector<double> maxMinShares(double pcpus, const std::vector<double>& demands, const std::vector<double>& weights);

// Each VM's weighted share of the pCPUs, demand aside, rounded up, within 1..vcpus.
std::vector<unsigned> staticFairSizes(double pcpus, const std::vector<double>& weights,
                                      const std::vector<unsigned>& vcpus);

}  // namespace vcpufold::bench
