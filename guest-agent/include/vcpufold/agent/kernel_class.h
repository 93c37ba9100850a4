// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Whether this guest folds on the host's ordinary hints (policy auto) by
// default: by its kernel class, as the real-guest bench measured it
// (docs/performance.md, "At a glance"). Pure: the kernel release and the
// actuator come in, the decision and its reason go out.
//
//   class                 the kernel                          its evidence
//   preferred-cpus        cpu_preferred_mask (patched), the   the bench's `kernel` column
//                         kernel actuator
//   stock-before-6.6      the cpuset actuator on a kernel      Debian 12's stock 6.1 (`cpuset`)
//                         older than 6.6 (CFS)
//   stock-6.6-and-later   the cpuset actuator on 6.6 or later  Debian's stock 6.12 (`cpuset-6.12`)
//                         (EEVDF, Debian 13's 6.12)
//   unknown               the release could not be read        none: not folded by default
//
// A class folds by default unless the bench shows folding it losing: a
// paired vcpufold / unfolded interval wholly below 1 for hackbench or compute.
// A VM whose policy is `fixed` (an explicit ask) is folded on every class;
// `[agent] fold = "always"` folds every class on auto hints too.

#include <optional>
#include <string>
#include <string_view>

#include "vcpufold/protocol/messages.h"

namespace vcpufold::agent {

enum class KernelClass { PreferredCpus, StockBefore66, Stock66AndLater, Unknown };
const char* kernelClassName(KernelClass kernelClass);

// release: /proc/sys/kernel/osrelease ("6.12.118+deb12-cloud-amd64"), or none
// when unreadable. actuator: the one the agent folds with.
KernelClass classifyKernel(const std::optional<std::string>& release, protocol::Actuator actuator);

// What the published bench says of folding this class on auto hints.
struct ClassEvidence {
  bool foldsByDefault = false;
  std::string figures;  // the measurement behind it, for the log and --oneshot
};
ClassEvidence evidenceFor(KernelClass kernelClass);

enum class FoldDefault { ByEvidence, Always };
const char* foldDefaultName(FoldDefault setting);

// Why auto hints are not applied on this guest; none: they are.
std::optional<std::string> autoFoldDeclined(KernelClass kernelClass, FoldDefault setting);

}  // namespace vcpufold::agent
