#include "vcpufold/agent/kernel_actuator.h"

#include "vcpufold/common/system_paths.h"
#include "vcpufold/protocol/cpulist.h"

namespace vcpufold::agent {

bool KernelActuator::isAvailable(const RootedFs& fs) { return fs.hasWriteMode(paths::kCpuPreferred); }

Expected<ApplyResult> KernelActuator::apply(const CpuSet& cpus, std::int64_t nowMs) {
  const std::string list = protocol::formatCpuList(cpus);
  auto outcome = knobs_.write(paths::kCpuPreferred, list + "\n", nowMs, KnobValueKind::CpuList);
  if (!outcome) return outcome.error();
  if (*outcome == KnobOutcome::Quarantined) return Error{std::string(paths::kCpuPreferred) + ": quarantined"};
  return ApplyResult{*outcome == KnobOutcome::Written, std::string("preferred=") + list};
}

Expected<void> KernelActuator::restore() {
  if (!isAvailable(knobs_.fs())) return {};
  return knobs_.fs().writeExisting(paths::kCpuPreferred, "\n");
}

}  // namespace vcpufold::agent
