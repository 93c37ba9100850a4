// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A fleet of emulated VMs on this host, each with its guest tree, its host CPU
// group and optionally a real vcpufold-agent, plus optionally a real
// vcpufold-hostd over them: what both benches set up. With a pCPU count, the
// VMs run in the bench's cpuset (host_cpuset.h) and hostd's pool is that set.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "child_process.h"
#include "cpu_group.h"
#include "fixture_tree.h"
#include "host_cpuset.h"
#include "scenario_file.h"

namespace vcpufold::bench {

struct FleetBinaries {
  std::string emulatedVm, agent, hostd;
};

struct FleetOptions {
  unsigned tickMs = 1000;  // hostd's tick and the agents' interval
  unsigned pcpus = 0;      // 0: no cpuset, the VMs run anywhere and hostd's pool is its default
  // hostd runs under --root with a /proc/stat captured when it starts (the
  // VMs' own /proc entries and /sys live): no load of this machine's other
  // processes enters its capacity. For tests whose subject is hostd's
  // reaction, not what else the machine runs; a bench measures with it off.
  bool hostLoadHidden = false;
  // hostd's unfold_delay_ms (none: hostd's default), to measure what the
  // unfold delay costs and spares.
  std::optional<unsigned> unfoldDelayMs{};
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
  // Starts the VMs (each with its schedule's first task count, changed later
  // with setTasks) in `directory`. Throws std::runtime_error when they do not
  // come up or the cpuset cannot be made.
  Fleet(const FleetBinaries& binaries, std::string directory, const std::vector<VmSpec>& vms,
        const FleetOptions& options);
  ~Fleet();
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;

  // Agents in the VMs whose spec says so.
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
  std::string cpus() const { return cpuset_ ? cpuset_->cpus() : "any"; }
  std::size_t size() const { return vms_.size(); }
  const VmSpec& spec(std::size_t vm) const { return vms_[vm].spec; }

 private:
  bool allExist(const std::string& suffix, bool agentsOnly = false) const;
  // The root hostd runs under with hostLoadHidden; returns it.
  std::string hostRootWithoutOtherLoad() const;

  FleetBinaries binaries_;
  std::string directory_;
  FleetOptions options_;
  bool weightsApplied_ = true;
  std::unique_ptr<HostCpuset> cpuset_;
  std::vector<EmulatedVmProcess> vms_;
  std::unique_ptr<testing::ChildProcess> hostd_;
};

// (monotonic ns, value) lines of a VM's .preferred.log or .tasks.log.
std::vector<std::pair<long, unsigned>> readTimeline(const std::string& path);
long monotonicNowNs();

// What an emulated VM's stats file says (written every 100 ms, stamped).
struct VmStats {
  double atNs = 0, operations = 0, runNs = 0, waitNs = 0, contextSwitches = 0;
  unsigned preferred = 0;
};
VmStats readVmStats(const std::string& path);

}  // namespace vcpufold::bench
