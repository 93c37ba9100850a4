// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/kernel_class.h"

#include <charconv>

namespace vcpufold::agent {
namespace {

// "6.12.118+deb12-cloud-amd64" -> {6, 12}; none unless it starts "N.M".
std::optional<std::pair<unsigned, unsigned>> majorMinor(std::string_view release) {
  unsigned major = 0, minor = 0;
  const char* end = release.data() + release.size();
  auto [afterMajor, majorError] = std::from_chars(release.data(), end, major);
  if (majorError != std::errc{} || afterMajor == end || *afterMajor != '.') return std::nullopt;
  auto [afterMinor, minorError] = std::from_chars(afterMajor + 1, end, minor);
  if (minorError != std::errc{} || afterMinor == afterMajor + 1) return std::nullopt;
  return std::pair{major, minor};
}

}  // namespace

const char* kernelClassName(KernelClass kernelClass) {
  switch (kernelClass) {
    case KernelClass::PreferredCpus:
      return "preferred-cpus";
    case KernelClass::StockBefore66:
      return "stock-before-6.6";
    case KernelClass::Stock66AndLater:
      return "stock-6.6-and-later";
    case KernelClass::Unknown:
      break;
  }
  return "unknown";
}

KernelClass classifyKernel(const std::optional<std::string>& release, protocol::Actuator actuator) {
  // The kernel actuator exists only where the kernel has preferred CPUs.
  if (actuator == protocol::Actuator::Kernel) return KernelClass::PreferredCpus;
  if (!release) return KernelClass::Unknown;
  const auto version = majorMinor(*release);
  if (!version) return KernelClass::Unknown;
  // 6.6 replaced CFS with EEVDF: the scheduler a folded guest's tasks meet.
  const bool eevdf = version->first > 6 || (version->first == 6 && version->second >= 6);
  return eevdf ? KernelClass::Stock66AndLater : KernelClass::StockBefore66;
}

ClassEvidence evidenceFor(KernelClass kernelClass) {
  // docs/performance.md, "At a glance": vcpufold / unfolded, paired, with the
  // housekeeping steering on. Change a line here only with a new run there.
  // A class whose last two runs show a loss in either is not folded
  // (guest-agent.md, "The rule"), so one wide interval does not flip it.
  switch (kernelClass) {
    case KernelClass::PreferredCpus:
      return {true, "patched 6.12, kernel actuator: hackbench 1.48 [1.30, 1.67], compute 0.93 [0.74, 1.32]"};
    case KernelClass::StockBefore66:
      return {false,
              "stock 6.1, cpuset actuator: compute 0.77 [0.48, 0.96] of unfolded in the last run "
              "(0.83 [0.59, 1.10] in the one before), hackbench 1.31 [0.92, 1.97]"};
    case KernelClass::Stock66AndLater:
      // Shown losing once (compute 0.88 [0.81, 0.99], dd0b21b), then no loss
      // in three runs in a row (0.93 [0.60, 1.14], 0.89 [0.60, 1.005], 0.77
      // [0.59, 1.01]): folded, as the rule says; compute's median stays below 1.
      return {true, "stock 6.12, cpuset actuator: hackbench 1.45 [1.44, 1.56], compute 0.77 [0.59, 1.01]"};
    case KernelClass::Unknown:
      break;
  }
  return {false, "the kernel release could not be read, so no measurement applies"};
}

const char* foldDefaultName(FoldDefault setting) { return setting == FoldDefault::Always ? "always" : "by-evidence"; }

std::optional<std::string> autoFoldDeclined(KernelClass kernelClass, FoldDefault setting) {
  if (setting == FoldDefault::Always) return std::nullopt;
  const ClassEvidence evidence = evidenceFor(kernelClass);
  if (evidence.foldsByDefault) return std::nullopt;
  return std::string("guest kernel class ") + kernelClassName(kernelClass) + " is not folded by default (" +
         evidence.figures + "); policy fixed, or [agent] fold = \"always\", folds it";
}

}  // namespace vcpufold::agent
