// SPDX-License-Identifier: GPL-2.0-or-later
#include "modes.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace vcpufold::bench {

const char* modeName(Mode mode) {
  switch (mode) {
    case Mode::Unfolded:
      return "unfolded";
    case Mode::StealLaw:
      return "steal-law";
    case Mode::Vcpufold:
      return "vcpufold";
    case Mode::StaticFair:
      return "static-fair";
    case Mode::AlwaysOne:
      return "always-1";
    case Mode::BestStatic:
      return "best-static";
    case Mode::Clairvoyant:
      return "clairvoyant";
  }
  return "?";
}

std::optional<Mode> modeFromName(const std::string& name) {
  for (Mode mode : kAllModes)
    if (name == modeName(mode)) return mode;
  return std::nullopt;
}

bool isControlled(Mode mode) { return mode == Mode::StealLaw || mode == Mode::Vcpufold; }

std::vector<double> maxMinShares(double pcpus, const std::vector<double>& demands, const std::vector<double>& weights) {
  std::vector<double> shares(demands.size(), 0.0);
  std::vector<bool> satisfied(demands.size(), false);
  double left = pcpus;
  for (std::size_t i = 0; i < demands.size(); ++i)
    if (demands[i] <= 0 || weights[i] <= 0) satisfied[i] = true;
  // Each round gives every unsatisfied VM the same CPU per unit of weight,
  // stopping at the first VM whose demand that meets; at most one round per VM.
  while (left > 1e-12) {
    double weightLeft = 0;
    for (std::size_t i = 0; i < demands.size(); ++i)
      if (!satisfied[i]) weightLeft += weights[i];
    if (weightLeft <= 0) break;
    double perWeight = left / weightLeft;
    for (std::size_t i = 0; i < demands.size(); ++i)
      if (!satisfied[i]) perWeight = std::min(perWeight, (demands[i] - shares[i]) / weights[i]);
    for (std::size_t i = 0; i < demands.size(); ++i) {
      if (satisfied[i]) continue;
      shares[i] += perWeight * weights[i];
      left -= perWeight * weights[i];
      if (shares[i] >= demands[i] - 1e-12) satisfied[i] = true;
    }
  }
  return shares;
}

std::vector<unsigned> staticFairSizes(double pcpus, const std::vector<double>& weights,
                                      const std::vector<unsigned>& vcpus) {
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<unsigned> sizes;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const double share = total > 0 ? pcpus * weights[i] / total : 1;
    sizes.push_back(std::clamp(static_cast<unsigned>(std::ceil(share - 1e-9)), 1u, vcpus[i]));
  }
  return sizes;
}

}  // namespace vcpufold::bench
