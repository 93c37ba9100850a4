// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Which CPUs stay preferred for a requested size: a pure function of the
// topology.
//
// The plan orders the online cores once and the set for n cores is the first
// n of that order, so every set is a subset of the next larger one (folding
// or unfolding by one step moves the fewest tasks). The order:
//   1. the core of the first housekeeping CPU, always kept;
//   2. then every other housekeeping core (no nohz_full or isolated thread),
//      before any core that has such a thread: isolation wins over NUMA;
//   3. within each of those two groups, one core at a time from the NUMA node
//      with the smallest share of the group's CPUs kept so far (nodes stay
//      proportional), by CPU number within a node.
// Whole cores only: SMT siblings are kept or dropped together.

#include <cstddef>
#include <vector>

#include "vcpufold/agent/topology.h"

namespace vcpufold::agent {

struct Placement {
  CpuSet cpus;
  std::size_t cores = 0;
  unsigned requested = 0;
  // The request was below one core or above all online CPUs, or not a whole
  // number of cores: cpus.size() differs from requested.
  bool adjusted = false;
};

class PlacementPlan {
 public:
  explicit PlacementPlan(const Topology& topology);

  [[nodiscard]] std::size_t coreCount() const { return order_.size(); }
  [[nodiscard]] const std::vector<Core>& coresInKeepOrder() const { return order_; }
  // The first n cores of the order; n is clamped to 1..coreCount().
  [[nodiscard]] CpuSet forCores(std::size_t cores) const;
  // The fewest leading cores holding at least `cpus` CPUs, clamped to one
  // core at least and all online CPUs at most.
  [[nodiscard]] Placement forCpus(unsigned cpus) const;
  // How many leading cores a set covers: the largest n whose set is within
  // cpus (at least 1). Used to resume stepping from an applied set.
  [[nodiscard]] std::size_t coresWithin(const CpuSet& cpus) const;

 private:
  std::vector<Core> order_;
  std::vector<CpuSet> prefix_;  // prefix_[n]: CPUs of the first n cores
};

}  // namespace vcpufold::agent
