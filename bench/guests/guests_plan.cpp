// SPDX-License-Identifier: GPL-2.0-or-later
#include "guests_plan.h"

#include <algorithm>
#include <sstream>

namespace vcpufold::bench {

const std::vector<GuestWorkload>& guestWorkloads() {
  // Sizes make a unit take about 3-6 s (6.12 kernels) to 5-15 s (Debian's
  // 6.1) with 3 guests x 4 vCPUs on 2 pCPUs under TCG, so that five
  // repetitions of three workloads on three kernels fit in about an hour.
  static const std::vector<GuestWorkload> workloads{
      {"hackbench-pipe", 160, "message", "hackbench -p -g 4 (160 tasks, pipes)"},
      {"hackbench-socket", 100, "message", "hackbench -g 4 (160 tasks, UNIX sockets)"},
      {"files", 80, "spinlock",
       "8 tasks creating, copying and removing small files on tmpfs (fork, exec, dentry and inode locks)"},
      {"compute", 40000, "compute", "4 shell loops that only compute (the control)"},
      // A diagnostic: the compute unit folded without vcpufold, so that a run
      // tells the fold's own cost from what the agent and hostd add to it.
      {"compute-folded", 40000, "compute",
       "the compute unit with its 4 loops in a cpuset of vCPU 0 that the workload makes itself (no vcpufold)"},
      // The same fold onto 2 vCPUs: whether the fold's cost depends on how
      // many vCPU threads stay busy on the host (3 guests folded to 1 vCPU
      // each leave 3 busy threads on 2 pCPUs; folded to 2, 6).
      {"compute-folded-2", 40000, "compute",
       "the compute unit with its 4 loops in a cpuset of vCPUs 0-1 that the workload makes itself (no vcpufold)"},
  };
  return workloads;
}

const GuestWorkload* findGuestWorkload(const std::string& name) {
  for (const auto& workload : guestWorkloads())
    if (workload.name == name) return &workload;
  return nullptr;
}

const std::vector<GuestActuator>& guestActuators() {
  static const std::vector<GuestActuator> actuators{
      {"cpuset", "cpuset", false, true, "", true},
      {"cpuset-6.12", "cpuset", false, true, "linux-image-6.12-cloud-amd64", true},
      {"kernel", "kernel", true, true, "", true},
      {"cpuset-patched", "cpuset", true, false, "", true},
      {"cpuset-unsteered", "cpuset", false, false, "", false},
      {"cpuset-6.12-unsteered", "cpuset", false, false, "linux-image-6.12-cloud-amd64", false},
      {"cpuset-shipped", "cpuset", false, false, "", true, false},
      {"cpuset-6.12-shipped", "cpuset", false, false, "linux-image-6.12-cloud-amd64", true, false},
      {"cpuset-shipped-sample-1s", "cpuset", false, false, "", true, false, 1000},
      {"cpuset-hostd-only", "cpuset", false, false, "", true, false, 0, false},
      {"cpuset-agent-cgroup", "cpuset", false, false, "", true, true, 0, true, true},
  };
  return actuators;
}

const GuestActuator* findGuestActuator(const std::string& name) {
  for (const auto& actuator : guestActuators())
    if (actuator.name == name) return &actuator;
  return nullptr;
}

std::string agentStartCommand(const GuestActuator& variant) {
  if (!variant.agents) return "";
  // The table's actuator names are single words (cpuset, kernel): no quoting
  // beyond the empty one, which keeps the options in their place.
  std::string options;
  if (!variant.steerHousekeeping) options += " unsteered";
  if (!variant.agentFoldsAlways) options += " shipped-fold";
  if (variant.agentSampleMs != 0) options += " sample-ms=" + std::to_string(variant.agentSampleMs);
  if (variant.agentInOwnCgroup) options += " own-cgroup";
  const std::string actuator =
      variant.agentActuator.empty() ? (options.empty() ? "" : " ''") : " " + variant.agentActuator;
  return "sh /lab/agent start" + actuator + options;
}

const char* guestModeName(GuestMode mode) {
  switch (mode) {
    case GuestMode::Unfolded:
      return "unfolded";
    case GuestMode::Vcpufold:
      return "vcpufold";
    case GuestMode::Fixed:
      return "fixed";
  }
  return "?";
}

std::optional<GuestMode> parseGuestMode(const std::string& name) {
  for (const GuestMode mode : kGuestModes)
    if (name == guestModeName(mode)) return mode;
  return std::nullopt;
}

unsigned fixedShareVcpus(unsigned pcpus, unsigned guests, unsigned vcpus) {
  if (guests == 0 || vcpus == 0) return 1;
  const unsigned share = (pcpus + guests - 1) / guests;
  return std::clamp(share, 1U, vcpus);
}

std::vector<PlannedRun> interleavedPlan(unsigned repetitions, const std::vector<std::string>& workloads) {
  // The six orders of the three modes as a Williams square: over any six
  // consecutive cells each mode runs first, second and third twice, and each
  // runs right after each other mode twice. A fixed order would hand the
  // first place (after the pause of a workload change, when the machine has
  // cooled) and the same predecessor to one mode every time.
  constexpr GuestMode U = GuestMode::Unfolded, V = GuestMode::Vcpufold, F = GuestMode::Fixed;
  constexpr GuestMode kOrders[6][3] = {{U, V, F}, {V, F, U}, {F, U, V}, {F, V, U}, {U, F, V}, {V, U, F}};
  std::vector<PlannedRun> plan;
  std::size_t cell = 0;
  for (unsigned repetition = 1; repetition <= repetitions; ++repetition)
    for (const auto& workload : workloads) {
      for (const GuestMode mode : kOrders[cell % 6]) plan.push_back({repetition, workload, mode});
      ++cell;
    }
  return plan;
}

std::optional<UnitWindow> measuredUnitWindow(const std::string& unitLog) {
  std::istringstream lines(unitLog);
  std::vector<UnitWindow> units;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    UnitWindow unit;
    if (!(fields >> unit.start >> unit.end) || unit.end < unit.start) return std::nullopt;  // "failed", or garbage
    units.push_back(unit);
  }
  if (units.size() < 2 || units[1].end <= units[1].start) return std::nullopt;
  return units[1];
}

std::optional<double> measuredUnitSeconds(const std::string& unitLog) {
  const auto window = measuredUnitWindow(unitLog);
  if (!window) return std::nullopt;
  return window->end - window->start;
}

}  // namespace vcpufold::bench
