#pragma once
// A fleet of emulated VMs on this host, each with its guest tree, its host CPU
// group and optionally a real vcpufold-agent, plus optionally a real
// vcpufold-hostd over them: what both benches set up.

#include <memory>
#include <string>
#include <vector>

#include "child_process.h"
#include "cpu_group.h"
#include "fixture_tree.h"
#include "scenarios.h"

namespace vcpufold::bench {

struct FleetBinaries {
  std::string emulatedVm, agent, hostd;
};

struct EmulatedVmProcess {
  VmSpec spec;
  std::unique_ptr<testing::FixtureTree> tree;
  std::unique_ptr<CpuGroup> group;
  std::unique_ptr<testing::ChildProcess> vm;
  std::unique_ptr<testing::ChildProcess> agent;
};

class Fleet {
 public:
  // Starts the VMs (tasksBefore runnable tasks each) in `directory`; false
  // from weightsApplied() when the host CPU groups could not take the weights.
  // Throws std::runtime_error when the VMs (or, from startAgents, the agents)
  // do not come up.
  Fleet(const FleetBinaries& binaries, std::string directory, const std::vector<VmSpec>& vms,
        const std::string& workload, unsigned tickMs);
  ~Fleet();
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;

  void startAgents();
  void startHostd();
  // Stops hostd, then the agents (they unfold), then the VMs.
  void stop();

  void setTasks(std::size_t vm, unsigned tasks) const;
  // Writes the preferred vCPUs as a patched kernel would take them: the first `count`.
  void setPreferred(std::size_t vm, unsigned count) const;

  const std::string& directory() const { return directory_; }
  std::string file(std::size_t vm, const std::string& suffix) const;
  bool weightsApplied() const { return weightsApplied_; }
  std::size_t size() const { return vms_.size(); }

 private:
  bool allExist(const std::string& suffix) const;

  FleetBinaries binaries_;
  std::string directory_;
  unsigned tickMs_;
  bool weightsApplied_ = true;
  std::vector<EmulatedVmProcess> vms_;
  std::unique_ptr<testing::ChildProcess> hostd_;
};

// (monotonic ns, value) lines of a VM's .preferred.log or .tasks.log.
std::vector<std::pair<long, unsigned>> readTimeline(const std::string& path);
long monotonicNowNs();

}  // namespace vcpufold::bench
