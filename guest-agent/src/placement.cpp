// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/placement.h"

#include <algorithm>
#include <map>

namespace vcpufold::agent {

PlacementPlan::PlacementPlan(const Topology& topology) {
  std::vector<Core> remaining = topology.cores;
  auto isHousekeeping = [&topology](const Core& core) { return core.threads.isSubsetOf(topology.housekeeping); };
  std::sort(remaining.begin(), remaining.end(), [&](const Core& a, const Core& b) {
    if (isHousekeeping(a) != isHousekeeping(b)) return isHousekeeping(a);
    return *a.threads.first() < *b.threads.first();
  });

  auto take = [&](std::vector<Core>::iterator it) {
    order_.push_back(*it);
    remaining.erase(it);
  };
  if (auto first = topology.housekeeping.first()) {
    auto it = std::find_if(remaining.begin(), remaining.end(),
                           [&](const Core& core) { return core.threads.contains(*first); });
    if (it != remaining.end()) take(it);
  }
  // Isolation wins over NUMA proportion: every housekeeping core comes before
  // any core with a nohz_full or isolated thread, and the nodes are kept
  // proportional within each of the two groups.
  for (const bool housekeepingGroup : {true, false}) {
    std::map<unsigned, std::size_t> totalCpus;
    std::map<unsigned, std::size_t> keptCpus;
    auto inGroup = [&](const Core& core) { return isHousekeeping(core) == housekeepingGroup; };
    for (const Core& core : order_) {
      if (!inGroup(core)) continue;
      totalCpus[core.node] += core.threads.size();
      keptCpus[core.node] += core.threads.size();
    }
    for (const Core& core : remaining)
      if (inGroup(core)) totalCpus[core.node] += core.threads.size();
    for (;;) {
      // The node furthest behind its proportional share: kept/total smallest.
      std::optional<unsigned> neediest;
      for (const auto& [node, total] : totalCpus) {
        const bool hasCores = std::any_of(remaining.begin(), remaining.end(), [&, node = node](const Core& core) {
          return core.node == node && inGroup(core);
        });
        if (!hasCores) continue;
        if (!neediest || keptCpus[node] * totalCpus[*neediest] < keptCpus[*neediest] * total) neediest = node;
      }
      if (!neediest) break;
      auto it = std::find_if(remaining.begin(), remaining.end(),
                             [&](const Core& core) { return core.node == *neediest && inGroup(core); });
      keptCpus[it->node] += it->threads.size();
      take(it);
    }
  }

  prefix_.emplace_back();
  for (const Core& core : order_) prefix_.push_back(prefix_.back() | core.threads);
}

CpuSet PlacementPlan::forCores(std::size_t cores) const {
  if (order_.empty()) return {};
  return prefix_[std::clamp<std::size_t>(cores, 1, order_.size())];
}

Placement PlacementPlan::forCpus(unsigned cpus) const {
  Placement placement;
  placement.requested = cpus;
  if (order_.empty()) return placement;
  std::size_t cores = 1;
  while (cores < order_.size() && prefix_[cores].size() < cpus) ++cores;
  placement.cores = cores;
  placement.cpus = prefix_[cores];
  placement.adjusted = placement.cpus.size() != cpus;
  return placement;
}

std::size_t PlacementPlan::coresWithin(const CpuSet& cpus) const {
  std::size_t cores = 1;
  while (cores < order_.size() && prefix_[cores + 1].isSubsetOf(cpus)) ++cores;
  return cores;
}

}  // namespace vcpufold::agent
