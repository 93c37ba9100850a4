// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Steers a folded guest's own housekeeping onto its preferred CPUs, for the
// cpuset actuators. A cpuset moves user tasks only; the patched kernel's
// preferred CPUs steer the kernel's own work as well, and on a stock kernel
// that work keeps waking the vCPUs a folded guest does not prefer (the host
// then runs and preempts them as if the guest were unfolded). While folded:
//  - the CPUs not preferred form a cpuset partition of their own,
//    "vcpufold.parked", with no tasks in it but the agent: the kernel takes
//    them out of the root cgroup's CPUs (unbound kernel threads such as the
//    RCU grace-period thread and kcompactd leave them) and out of the
//    scheduler domain the busy CPUs balance over (an "isolated" partition has
//    none at all; kernels without that type get a "root" partition, a domain
//    of its own). Another fold changes the partition in place (through a
//    member), and parked CPUs the root cgroup still shows are taken again;
//  - device IRQs' affinity (/proc/irq/N/smp_affinity_list) is the preferred
//    CPUs. IRQs the kernel manages or keeps per CPU refuse the write and are
//    left as they are;
//  - the unbound workqueues' CPU mask is the preferred CPUs.
// Every original value is recorded in a state file under /run before it is
// changed; release() and restore() write each one back exactly (restore()
// also after a crash, from the state file alone). irqbalance rewrites IRQ
// affinity on its own: where it runs, IRQs are left to it (said once) and the
// rest is still steered.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "vcpufold/agent/actuator.h"
#include "vcpufold/agent/cgroup_cpuset_actuator.h"
#include "vcpufold/agent/knob_writer.h"

namespace vcpufold::agent {

// A CPU set as the kernel prints a CPU bitmap ("%*pb": hex, a comma every 32
// CPUs, e.g. "f" or "1,00000003"), and back. The parser takes what the kernel
// prints (leading zeros and commas included); anything else fails.
std::string formatCpuMask(const CpuSet& cpus);
Expected<CpuSet> parseCpuMask(std::string_view text);

// Whether one of these /proc/PID/comm texts is irqbalance's.
bool isIrqbalanceAmong(const std::vector<std::string>& comms);

class HousekeepingSteering {
 public:
  static constexpr const char* kParkedCgroupName = CgroupCpusetActuator::kParkedCgroupName;
  // How often the process list is read for irqbalance.
  static constexpr std::chrono::milliseconds kIrqbalanceCheck{30'000};
  // How often, for one parked set, CPUs the root cgroup still shows are
  // taken again before they are left so (said once).
  static constexpr int kRetakesPerSet = 5;

  // The agent itself stays where it is: with systemd in its unit, folded
  // with the rest; without, in the root cgroup, which the partition confines
  // to the preferred CPUs. Not on the parked ones: in TCG guests its
  // wake-ups there kept the parked vCPUs' timers and RCU going (40 timer
  // interrupts a second against about 1) and their host threads ran twice
  // the CPU, and only that placement showed folded compute losing (0.88
  // [0.82, 0.96] of unfolded against 0.96 [0.92, 1.02]; guest-agent.md,
  // "Housekeeping steering"; performance.md).
  HousekeepingSteering(KnobWriter& knobs, std::string cgroupRoot);

  // Steers onto `preferred` (a proper subset of the online CPUs; the online
  // set itself is a release()). Cheap when nothing changed: reads, compares,
  // writes only what differs. A part the kernel refuses is skipped and said
  // in the result, never an error that would stop the fold itself.
  Expected<ApplyResult> apply(const CpuSet& preferred, const CpuSet& online, MonotonicTime now);
  // Every recorded value back; nothing to do when nothing is steered.
  Expected<ApplyResult> release();
  // The parked CPUs go back to the root cgroup before the cpuset actuator
  // widens the other cgroups (the kernel keeps a partition's CPUs
  // exclusive): the partition becomes a member, which gives them back at
  // once, and the cgroup stays for the next apply() to change in place.
  Expected<void> unpark();

  [[nodiscard]] bool irqbalanceRuns() const { return irqbalanceRuns_; }

  // Undoes what the state file records, without an instance (for --restore
  // and a start after a crash).
  static Expected<void> restoreFromState(const RootedFs& fs);
  static bool hasLeftovers(const RootedFs& fs);

 private:
  struct State {
    std::string cgroupRoot;
    bool createdParked = false;
    std::map<unsigned, std::string> irqAffinity;  // IRQ -> its smp_affinity_list before us
    std::optional<std::string> workqueueMask;     // the unbound workqueue mask before us
    [[nodiscard]] bool empty() const { return !createdParked && irqAffinity.empty() && !workqueueMask; }
  };
  static std::optional<State> loadState(const RootedFs& fs);
  static Expected<void> restoreState(const RootedFs& fs, const State& state);
  Expected<void> saveState() const;

  Expected<std::string> park(const CpuSet& parked);
  // "" when the root cgroup has given every parked CPU up; else takes them
  // again and says so.
  std::string settle(const CpuSet& parked, const std::string& type);
  // The parked CPUs in the root cgroup's effective set; none: unreadable.
  [[nodiscard]] std::optional<CpuSet> parkedCpusTheRootStillHas(const CpuSet& parked) const;
  // The parked cgroup removed (its tasks moved to the root cgroup first).
  Expected<void> removeParked();
  // The agent's parked cgroup, and its partition file, under the cgroup root in use.
  std::string parkedCgroup() const;
  std::string parkedPartitionFile() const;
  Expected<std::string> steerIrqs(const CpuSet& preferred, MonotonicTime now);
  Expected<std::string> steerWorkqueues(const CpuSet& preferred, MonotonicTime now);
  Expected<void> giveIrqsBack();
  void checkIrqbalance(MonotonicTime now);

  KnobWriter& knobs_;
  State state_;
  std::set<unsigned> refusedIrqs_;      // per-CPU or kernel-managed: refused once, left alone
  std::optional<CpuSet> parkRefusedFor_;  // the parked set the kernel would not make a partition
  std::optional<std::pair<CpuSet, int>> retakes_;  // a parked set the root cgroup kept, and retakes so far
  bool irqbalanceRuns_ = false;
  std::optional<MonotonicTime> irqbalanceCheckedAt_;
};

}  // namespace vcpufold::agent
