// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/kernel_actuator.h"

#include "vcpufold/common/system_paths.h"
#include "vcpufold/protocol/cpulist.h"

namespace vcpufold::agent {

bool KernelActuator::isAvailable(const RootedFs& fs) { return fs.hasWriteMode(paths::kCpuPreferred); }

Expected<ApplyResult> KernelActuator::apply(const CpuSet& cpus, MonotonicTime now) {
  const std::string list = protocol::formatCpuList(cpus);
  auto outcome = knobs_.write(paths::kCpuPreferred, list + "\n", now, KnobValueKind::CpuList);
  if (!outcome) return outcome.error();
  if (*outcome == KnobOutcome::Quarantined) return Error{std::string(paths::kCpuPreferred) + ": quarantined"};
  released_ = false;
  return ApplyResult{*outcome == KnobOutcome::Written, std::string("preferred=") + list};
}

Expected<ApplyResult> KernelActuator::release(MonotonicTime) {
  // The file then reads as all active CPUs, so "unchanged" is remembered, not read.
  if (released_) return ApplyResult{};
  if (auto done = restore(); !done) return done.error();
  return ApplyResult{true, "preferred mask handed back to the kernel (all active CPUs)"};
}

Expected<void> KernelActuator::restore() {
  if (!isAvailable(knobs_.fs())) return {};
  auto written = knobs_.fs().writeExisting(paths::kCpuPreferred, "\n");
  released_ = written.ok();
  return written;
}

}  // namespace vcpufold::agent
