// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Weighted max-min fair shares of CPU capacity: one pool (water-filling), and
// pools that overlap, where VMs may use different but intersecting sets of
// pCPUs (progressive filling over the VM-to-pCPU graph).

#include <cstddef>
#include <vector>

namespace vcpufold::hostd {

// Weighted max-min fair shares of capacity over demands (water-filling):
// share_i = min(demand_i, level * weight_i) with the level that fills
// capacity, or every demand when they fit.
std::vector<double> waterFill(double capacity, const std::vector<double>& demands, const std::vector<double>& weights);

// Claimants that may each use only some places (classes of pCPUs that the
// same VMs may run on), each place with its capacity in CPUs.
struct SharingProblem {
  std::vector<double> placeCapacity;
  std::vector<std::vector<std::size_t>> placesOf;  // per claimant: indexes into placeCapacity
  std::vector<double> demands;
  std::vector<double> weights;
};

// Weighted max-min fair shares by progressive filling: every claimant's share
// rises with one level (level * weight, never above its demand) until the
// places it may use are full; it then stops and the others go on. No share
// exceeds its demand, the shares fit the places (some assignment of each
// share to its places respects every capacity), and no share can grow
// without taking from one that is no larger per unit of weight. When every
// claimant may use every place this is waterFill over their sum.
std::vector<double> maxMinShares(const SharingProblem& problem);

// Whether amounts fit: some assignment of each claimant's amount to its
// places keeps every place within its capacity (a maximum flow). Exposed for
// tests and for the shares' own checks.
bool fitsPlaces(const SharingProblem& problem, const std::vector<double>& amounts);

}  // namespace vcpufold::hostd
