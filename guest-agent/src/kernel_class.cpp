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
  // A class whose last two runs show a loss in either, or whose paired
  // repetitions pooled over the page's runs do, is not folded (guest-agent.md,
  // "The rule"), so one wide interval does not flip it either way.
  switch (kernelClass) {
    case KernelClass::PreferredCpus:
      return {true, "patched 6.12, kernel actuator: hackbench 1.72 [1.36, 2.11], compute 0.84 [0.65, 1.05]"};
    case KernelClass::StockBefore66:
      return {false,
              "stock 6.1, cpuset actuator: compute 0.88 [0.80, 0.91] of unfolded in the last run "
              "(0.98 [0.79, 1.10] in the one before), 0.85 [0.79, 0.90] over the 38 paired repetitions "
              "of seven runs, hackbench-pipe 1.24 [1.09, 1.38] over six"};
    case KernelClass::Stock66AndLater:
      // Shown losing in dd0b21b and in 8cd17f8's run; not in 8177c5b's or
      // 91576f5's alone (the agent on the preferred CPUs), but those two
      // pooled show it (0.81 [0.66, 0.97]), and so do the page's twelve runs
      // without the agent's spin (55 of 76 paired repetitions below 1).
      // Not folded until two runs in a row and the pool show none.
      return {false,
              "stock 6.12, cpuset actuator: compute 0.75 [0.61, 1.05] of unfolded in the last run "
              "(0.87 [0.65, 1.03] in the one before), 0.89 [0.85, 0.93] over the 76 paired repetitions "
              "of twelve runs, hackbench 1.46 [1.35, 1.53] over six"};
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
