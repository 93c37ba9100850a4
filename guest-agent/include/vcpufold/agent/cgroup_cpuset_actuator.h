// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The cpuset actuator for stock kernels, writing cgroup v2 directly (where
// systemd is not PID 1; with systemd, SystemdCpusetActuator asks systemd).
//
// It restricts every top-level cgroup to the preferred CPUs through
// cpuset.cpus, after enabling the cpuset controller in the root's
// subtree_control. Tasks of the root cgroup itself cannot be restricted, so
// (unless configured not to) the user-space ones are moved into a cgroup of
// ours, "vcpufold.fold"; kernel threads, PID 1 and the agent itself stay.
// Rules: a cgroup whose CPUs someone else set (non-empty cpuset.cpus not
// written by us, even every CPU, or a partition) is left alone; every change is recorded in a
// state file under /run before it is made, so restore() undoes exactly what
// was done, even after a crash. Restore empties what it set; the kernel
// refuses that for a cgroup with tasks, which then gets every CPU, recorded
// as handed back (paths::kCpusetHandedBackFile): the next fold takes such a
// cgroup as its own again while it still holds exactly that value, and as
// someone else's once it holds anything else.

#include <map>
#include <optional>
#include <set>
#include <string>

#include "vcpufold/agent/actuator.h"
#include "vcpufold/agent/knob_writer.h"

namespace vcpufold::agent {

// The cgroup2 mount point in a /proc/self/mountinfo text, if any.
std::optional<std::string> findCgroup2Mount(std::string_view mountinfo);
// Whether /proc/<pid>/stat describes a kernel thread (PF_KTHREAD in flags).
bool isKernelThread(std::string_view procPidStat);
// Removes a child cgroup of `root`, its tasks moved to `root` first. rmdir
// fails with EBUSY while a task forked meanwhile is inside, and also for a
// moment after a task that exited inside (until its parent reaps it): move
// and retry, for at most half a second.
Expected<void> removeCgroupMovingTasks(const RootedFs& fs, const std::string& root, const std::string& cgroup);

class CgroupCpusetActuator final : public Actuator {
 public:
  static constexpr const char* kFoldCgroupName = "vcpufold.fold";
  // The housekeeping steering's partition of the CPUs not preferred
  // (housekeeping_steering.h): its own, never folded as a user cgroup.
  static constexpr const char* kParkedCgroupName = "vcpufold.parked";

  // The cgroup2 root if it offers the cpuset controller, else why not.
  static Expected<std::string> findUsableRoot(const RootedFs& fs);

  // slice: how long one pass may spend moving root tasks (at least one
  // task moves per pass); the rest is deferred work.
  CgroupCpusetActuator(KnobWriter& knobs, std::string cgroupRoot, bool moveRootTasks,
                       std::chrono::milliseconds slice = kDeferredSlice);

  [[nodiscard]] protocol::Actuator kind() const override { return protocol::Actuator::Cpuset; }
  Expected<ApplyResult> apply(const CpuSet& cpus, MonotonicTime now) override;
  // Everything the folds did; a controller enabled by prepare() stays.
  Expected<ApplyResult> release(MonotonicTime now) override;
  Expected<void> restore() override;
  // Enables the cpuset controller in the root's subtree_control (recorded in
  // the state file, so that stop and --restore give it back).
  Expected<ApplyResult> prepare(MonotonicTime now) override;
  // Root tasks still to move into vcpufold.fold.
  [[nodiscard]] bool hasDeferredWork() const override { return movesPending_; }
  Expected<ApplyResult> doDeferredWork(MonotonicTime now) override;

  // Undoes what the state file records, without an actuator (for --restore);
  // with keepController, all but the controller it enabled, which the state
  // file then records alone.
  static Expected<void> restoreFromState(const RootedFs& fs, bool keepController = false);
  // A state file exists: an earlier agent folded and did not restore.
  static bool hasLeftovers(const RootedFs& fs);

  // The cgroups restore handed back at every CPU (name -> the CPU list it
  // wrote), under the cgroup root it names; empty when there is no record or
  // it names another root.
  static std::map<std::string, std::string> handedBack(const RootedFs& fs, const std::string& cgroupRoot);

 private:
  struct State {
    std::string cgroupRoot;
    bool enabledCpuset = false;
    bool createdFoldCgroup = false;
    std::set<std::string> managed;  // top-level cgroups whose cpuset.cpus we set
  };
  static std::optional<State> loadState(const RootedFs& fs);
  static Expected<void> writeState(const RootedFs& fs, const State& state);
  Expected<void> saveState() const;
  Expected<void> undo(bool keepController);
  Expected<bool> ensureCpusetEnabled();
  Expected<void> ensureFoldCgroup();
  // Moves root tasks for one slice; says how many, and whether any were left.
  Expected<int> moveRootTasks();
  // "moved N tasks into vcpufold.fold; " (and that more follow).
  [[nodiscard]] std::string movedText(int moved) const;

  KnobWriter& knobs_;
  State state_;
  bool moveRootTasks_;
  std::chrono::milliseconds slice_;
  bool movesPending_ = false;
  // The root cgroup's task list after the last pass that moved all it could
  // (what is left there stays: PID 1, the agent, kernel threads). A fold whose
  // root cgroup still lists just that has nothing to move, so apply() does not
  // ask for a pass that reads every task's /proc/PID/stat: it runs on every
  // hint and interval, on a vCPU the guest does not prefer. None: no such pass
  // yet (or an unfold since).
  std::optional<std::string> rootTasksAfterLastPass_;
  std::set<std::string> foreign_;  // restricted by someone else; logged once
  // The handed-back record, read at the first cgroup that needs it after
  // each restore.
  std::optional<std::map<std::string, std::string>> handedBack_;
};

}  // namespace vcpufold::agent
