#include "scenarios.h"

#include <algorithm>
#include <cmath>

#include "vcpufold/hostd/allocation.h"

namespace vcpufold::bench {

const char* modeName(Mode mode) {
  switch (mode) {
    case Mode::Unfolded:
      return "unfolded";
    case Mode::StealLaw:
      return "steal-law";
    case Mode::Vcpufold:
      return "vcpufold";
    case Mode::Oracle:
      return "oracle";
  }
  return "?";
}

bool parseMode(const std::string& text, Mode& mode) {
  for (Mode m : {Mode::Unfolded, Mode::StealLaw, Mode::Vcpufold, Mode::Oracle})
    if (text == modeName(m)) {
      mode = m;
      return true;
    }
  return false;
}

std::vector<Scenario> standardScenarios() {
  return {
      {"steady", "3 VMs x 4 vCPUs, equal weights, all busy", {{"vm-a"}, {"vm-b"}, {"vm-c"}}, false},
      {"load-step",
       "3 VMs x 4 vCPUs; vm-c idles, then wakes (measured from the wake)",
       {{"vm-a"}, {"vm-b"}, {"vm-c", 4, 100, 0, 4}},
       true},
      {"weights", "3 VMs x 4 vCPUs, weights 300:100:100, all busy", {{"vm-a", 4, 300}, {"vm-b"}, {"vm-c"}}, false},
  };
}

std::vector<unsigned> oracleSizes(const std::vector<VmSpec>& vms, const std::vector<unsigned>& tasks, double pcpus) {
  std::vector<double> demands, weights;
  double total = 0;
  for (std::size_t i = 0; i < vms.size(); ++i) {
    demands.push_back(tasks[i]);
    weights.push_back(vms[i].weight);
    total += tasks[i];
  }
  const std::vector<double> shares = total <= pcpus ? demands : hostd::waterFill(pcpus, demands, weights);
  std::vector<unsigned> sizes;
  for (std::size_t i = 0; i < vms.size(); ++i) {
    const auto size = static_cast<unsigned>(std::ceil(shares[i] - 1e-9));
    sizes.push_back(std::clamp(size, 1u, vms[i].vcpus));
  }
  return sizes;
}

}  // namespace vcpufold::bench
