#pragma once
// What the contention bench runs: scenarios (VMs, weights, a load step),
// workloads and modes, and the oracle's static right-sizing.

#include <string>
#include <vector>

namespace vcpufold::bench {

enum class Mode { Unfolded, StealLaw, Vcpufold, Oracle };
const char* modeName(Mode mode);
bool parseMode(const std::string& text, Mode& mode);

struct VmSpec {
  std::string name;
  unsigned vcpus = 4;
  double weight = 100;       // hostd policy weight; the host CPU group gets the same share
  unsigned tasksBefore = 4;  // runnable guest tasks before the step (or throughout)
  unsigned tasksAfter = 4;   // ... and after it
};

struct Scenario {
  std::string name;
  std::string description;
  std::vector<VmSpec> vms;
  bool loadStep = false;  // tasksBefore -> tasksAfter at the step; measured after it
  bool steady() const { return !loadStep; }
};

std::vector<Scenario> standardScenarios();

// Each VM's statically right-sized vCPU count for a load: its weighted fair
// share of the pCPUs (the same water-filling hostd uses) rounded up; all its
// busy vCPUs when the pool is not contended; one for an idle VM.
std::vector<unsigned> oracleSizes(const std::vector<VmSpec>& vms, const std::vector<unsigned>& tasks, double pcpus);

}  // namespace vcpufold::bench
