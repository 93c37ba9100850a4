// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/cpu_pools.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <optional>

#include "vcpufold/protocol/cpulist.h"

namespace vcpufold::hostd {
namespace {

// Pools are found over the distinct CPU sets VMs may use (a thousand VMs of
// one shared pool are one set), joined where the sets meet.
class SetUnion {
 public:
  explicit SetUnion(std::size_t count) : parent_(count) { std::iota(parent_.begin(), parent_.end(), 0); }
  std::size_t find(std::size_t i) {
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
    return i;
  }
  void join(std::size_t a, std::size_t b) { parent_[find(a)] = find(b); }

 private:
  std::vector<std::size_t> parent_;
};

// Where a VM may run, as capacity: its placement within the VM pool, less
// isolated pCPUs unless it is pinned to isolated ones alone.
protocol::CpuSet usableCpus(const VcpuPlacement& placement, const protocol::CpuSet& vmPool,
                            const protocol::CpuSet& shared) {
  if (placement.cpus.empty()) return shared;
  const protocol::CpuSet inPool = placement.cpus & vmPool;
  if (inPool.empty()) return placement.cpus;  // pinned outside the pool read: where it runs is what counts
  const protocol::CpuSet notIsolated = inPool - (vmPool - shared);
  return notIsolated.empty() ? inPool : notIsolated;
}

PoolLayout layoutOfPlacements(const protocol::CpuSet& vmPool, const protocol::CpuSet& isolated, std::size_t count,
                              const std::function<const VcpuPlacement&(std::size_t)>& placementOfVm) {
  PoolLayout layout;
  protocol::CpuSet shared = vmPool - isolated;
  if (shared.empty()) shared = vmPool;  // everything isolated: nothing better is known

  std::vector<protocol::CpuSet> sets;  // distinct sets
  std::vector<std::size_t> setOfVm;
  setOfVm.reserve(count);
  std::optional<std::size_t> anywhere;  // the set of VMs with no placement, found once (most VMs, most hosts)
  for (std::size_t vm = 0; vm < count; ++vm) {
    const VcpuPlacement& placement = placementOfVm(vm);
    if (placement.cpus.empty() && anywhere) {
      setOfVm.push_back(*anywhere);
      continue;
    }
    const protocol::CpuSet cpus = usableCpus(placement, vmPool, shared);
    const auto found = std::find(sets.begin(), sets.end(), cpus);
    setOfVm.push_back(static_cast<std::size_t>(found - sets.begin()));
    if (found == sets.end()) sets.push_back(cpus);
    if (placement.cpus.empty()) anywhere = setOfVm.back();
  }
  if (sets.empty()) sets.push_back(shared);  // no VMs: the pool they would have

  // Places: pCPUs under the same sets (one set, the usual host: one place).
  std::vector<std::vector<std::size_t>> setsOfPlace;
  protocol::CpuSet anyCpu;
  if (sets.size() == 1) {
    setsOfPlace.push_back({0});
    layout.places.push_back(sets[0]);
  } else {
    for (const protocol::CpuSet& cpus : sets) anyCpu = anyCpu | cpus;
  }
  for (unsigned cpu : anyCpu.toVector()) {
    std::vector<std::size_t> signature;
    for (std::size_t s = 0; s < sets.size(); ++s)
      if (sets[s].contains(cpu)) signature.push_back(s);
    const auto found = std::find(setsOfPlace.begin(), setsOfPlace.end(), signature);
    if (found == setsOfPlace.end()) {
      setsOfPlace.push_back(signature);
      layout.places.push_back(protocol::CpuSet{cpu});
    } else {
      layout.places[static_cast<std::size_t>(found - setsOfPlace.begin())].insert(cpu);
    }
  }

  // Pools: sets joined by a place they share.
  SetUnion joined(sets.size());
  for (const auto& signature : setsOfPlace)
    for (std::size_t s : signature) joined.join(s, signature.front());
  std::vector<std::size_t> poolOfRoot(sets.size(), SIZE_MAX);
  std::vector<std::size_t> poolOfSet(sets.size());
  for (std::size_t s = 0; s < sets.size(); ++s) {
    const std::size_t root = joined.find(s);
    if (poolOfRoot[root] == SIZE_MAX) {
      poolOfRoot[root] = layout.pools.size();
      layout.pools.emplace_back();
    }
    poolOfSet[s] = poolOfRoot[root];
    layout.pools[poolOfSet[s]].cpus = layout.pools[poolOfSet[s]].cpus | sets[s];
  }
  // Pools in the order of their first pCPU: the same host reads the same way every tick.
  std::vector<std::size_t> order(layout.pools.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&layout](std::size_t a, std::size_t b) {
    return layout.pools[a].cpus.first().value_or(0) < layout.pools[b].cpus.first().value_or(0);
  });
  std::vector<std::size_t> rank(order.size());
  std::vector<CpuPool> sorted;
  for (std::size_t k = 0; k < order.size(); ++k) {
    rank[order[k]] = k;
    sorted.push_back(std::move(layout.pools[order[k]]));
  }
  layout.pools = std::move(sorted);
  for (std::size_t& pool : poolOfSet) pool = rank[pool];

  std::vector<std::vector<std::size_t>> placesOfSet(sets.size());
  for (std::size_t p = 0; p < layout.places.size(); ++p) {
    layout.pools[poolOfSet[setsOfPlace[p].front()]].places.push_back(p);
    for (std::size_t s : setsOfPlace[p]) placesOfSet[s].push_back(p);
  }
  for (std::size_t vm = 0; vm < count; ++vm) {
    layout.poolOfVm.push_back(poolOfSet[setOfVm[vm]]);
    layout.placesOfVm.push_back(placesOfSet[setOfVm[vm]]);
    layout.pools[poolOfSet[setOfVm[vm]]].vms.push_back(vm);
  }
  for (CpuPool& pool : layout.pools) pool.name = protocol::formatCpuList(pool.cpus);
  for (std::size_t vm = 0; vm < count; ++vm)
    layout.dedicated.push_back(placementOfVm(vm).pinnedOneToOne && layout.pools[layout.poolOfVm[vm]].vms.size() == 1);
  return layout;
}

}  // namespace

PoolLayout layoutPools(const protocol::CpuSet& vmPool, const protocol::CpuSet& isolated,
                       const std::vector<VcpuPlacement>& placements) {
  return layoutOfPlacements(vmPool, isolated, placements.size(),
                            [&placements](std::size_t vm) -> const VcpuPlacement& { return placements[vm]; });
}

PoolLayout layoutPools(const protocol::CpuSet& vmPool, const protocol::CpuSet& isolated,
                       const std::vector<VmRecord>& vms) {
  return layoutOfPlacements(vmPool, isolated, vms.size(),
                            [&vms](std::size_t vm) -> const VcpuPlacement& { return vms[vm].placement; });
}

std::vector<PoolCapacity> poolCapacities(const PoolLayout& layout, const PoolLoad& load) {
  std::size_t allCpus = 0;
  for (const CpuPool& pool : layout.pools) allCpus += pool.cpus.size();
  std::vector<double> placeBusy(layout.places.size(), 0.0);
  std::vector<double> placeSize(layout.places.size(), 0.0);
  double allPlaces = 0;
  for (std::size_t p = 0; p < layout.places.size(); ++p) {
    placeSize[p] = static_cast<double>(layout.places[p].size());
    allPlaces += placeSize[p];
    for (const auto& [cpu, busy] : load.cpuBusy)
      if (layout.places[p].contains(cpu)) placeBusy[p] += busy;
  }
  // Only the pool's total known: spread by size.
  if (load.cpuBusy.empty() && load.poolBusyCpus && allPlaces > 0)
    for (std::size_t p = 0; p < layout.places.size(); ++p) placeBusy[p] = *load.poolBusyCpus * placeSize[p] / allPlaces;
  // A VM's run time, spread over the places it may use by their size: what
  // of each place's busy time its VMs can account for.
  std::vector<double> placeVmRun(layout.places.size(), 0.0);
  for (std::size_t vm = 0; vm < layout.placesOfVm.size(); ++vm) {
    double size = 0;
    for (std::size_t p : layout.placesOfVm[vm]) size += placeSize[p];
    const double run = vm < load.vmRunCpus.size() ? load.vmRunCpus[vm] : 0.0;
    if (size > 0)
      for (std::size_t p : layout.placesOfVm[vm]) placeVmRun[p] += run * placeSize[p] / size;
  }

  std::vector<PoolCapacity> result;
  for (const CpuPool& pool : layout.pools) {
    PoolCapacity out;
    const double cpus = static_cast<double>(pool.cpus.size());
    for (std::size_t vm : pool.vms) out.vmRunCpus += vm < load.vmRunCpus.size() ? load.vmRunCpus[vm] : 0.0;
    double excess = 0;
    for (std::size_t p : pool.places) {
      out.busyCpus += placeBusy[p];
      excess += std::max(placeBusy[p] - placeVmRun[p], 0.0);
    }
    // Without busy time (the first tick) no non-VM load is known.
    if (load.cpuBusy.empty() && !load.poolBusyCpus) out.busyCpus = out.vmRunCpus;
    out.measuredNonVmCpus = std::max(out.busyCpus - out.vmRunCpus, 0.0);
    const auto before = load.previousNonVmCpus.find(pool.name);
    out.nonVmCpus = before == load.previousNonVmCpus.end() ? out.measuredNonVmCpus
                                                           : std::min(out.measuredNonVmCpus, before->second);
    out.reserveCpus = allCpus ? load.reserveCpus * cpus / static_cast<double>(allCpus) : 0.0;
    for (std::size_t p : pool.places) {
      const double size = placeSize[p];
      // The non-VM load where the busy time is not the VMs'; by size when nowhere stands out.
      const double part = excess > 0 ? std::max(placeBusy[p] - placeVmRun[p], 0.0) / excess : size / cpus;
      out.placeCapacity.push_back(std::max(size - out.reserveCpus * size / cpus - out.nonVmCpus * part, 0.0));
      out.capacity += out.placeCapacity.back();
    }
    result.push_back(std::move(out));
  }
  return result;
}

}  // namespace vcpufold::hostd
