// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The cpuset actuator where systemd is PID 1: systemd owns the cgroup tree,
// so the agent asks it (AllowedCPUs=, at run time only, never persisted) to
// restrict the top-level slices and scopes (system.slice, user.slice,
// machine.slice, init.scope, ...) instead of writing cgroupfs. cgroupfs is
// only read, to compare before asking (read-compare-write) and to respect
// units that already restrict themselves. Every unit changed is recorded in
// the same state file as the direct mode, before the change, for --restore.

#include <memory>
#include <set>
#include <string>

#include "vcpufold/agent/actuator.h"
#include "vcpufold/agent/systemd_units.h"
#include "vcpufold/common/rooted_fs.h"

namespace vcpufold::agent {

class SystemdCpusetActuator final : public Actuator {
 public:
  // systemd is PID 1: /run/systemd/system exists (sd_booted(3)).
  static bool systemdIsInit(const RootedFs& fs);

  SystemdCpusetActuator(RootedFs fs, std::string cgroupRoot, std::unique_ptr<SystemdUnits> units);

  [[nodiscard]] protocol::Actuator kind() const override { return protocol::Actuator::Cpuset; }
  Expected<ApplyResult> apply(const CpuSet& cpus, MonotonicTime now) override;
  Expected<ApplyResult> release(MonotonicTime now) override;
  Expected<void> restore() override;

  // Resets AllowedCPUs= of the units a state file records (for --restore).
  static Expected<void> restoreFromState(const RootedFs& fs, SystemdUnits& units);
  static bool hasLeftovers(const RootedFs& fs);

 private:
  Expected<void> saveState() const;

  RootedFs fs_;
  std::string cgroupRoot_;
  std::unique_ptr<SystemdUnits> units_;
  std::set<std::string> managed_;
  std::set<std::string> foreign_;
};

}  // namespace vcpufold::agent
