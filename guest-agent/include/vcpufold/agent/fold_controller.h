// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// FoldController decides which CPUs stay preferred from moment to moment. Pure:
// time comes in as an argument, decisions go out as structs; the agent applies them.
//
//   valid hint (lease)      -> the hint's size along the placement plan (control host);
//                              policy off: all CPUs, and the fallback stays off
//                              until a hint with another policy arrives
//   no valid hint           -> the steal law, one core per interval (control fallback),
//                              when the fallback is allowed; otherwise all CPUs (none)

#include <cstdint>
#include <optional>
#include <string>

#include "vcpufold/agent/placement.h"
#include "vcpufold/agent/steal_law.h"
#include "vcpufold/common/monotonic_clock.h"
#include "vcpufold/protocol/messages.h"

namespace vcpufold::agent {

struct FoldDecision {
  CpuSet cpus;
  protocol::Control control = protocol::Control::None;
  std::string reason;
  friend bool operator==(const FoldDecision&, const FoldDecision&) = default;
};

struct FoldControllerConfig {
  // The guest's own steal law may run (config allows it, and this is a VM
  // that is not Xen dom0).
  bool fallbackAllowed = true;
  StealLawConfig law;
};

class FoldController {
 public:
  FoldController(PlacementPlan plan, FoldControllerConfig config);

  // A decoded, valid hint arrived at now. Starts or renews the lease.
  FoldDecision onHint(const protocol::Hint& hint, MonotonicTime now);
  // Once per interval, with the steal ratio of that interval when known.
  // Ends an expired lease, then holds the hint or steps the fallback law.
  FoldDecision onInterval(MonotonicTime now, std::optional<std::uint32_t> stealBp);
  // CPUs went offline or online: the plan is rebuilt for the new topology and
  // the current decision re-placed on it (the lease's hint, the fallback's
  // core count within the new maximum, or all CPUs).
  FoldDecision onTopologyChange(PlacementPlan plan);
  // A reloaded configuration (SIGHUP): the law and whether the fallback may run.
  void setConfig(FoldControllerConfig config) { config_ = config; }
  // The decision for "no one folds": all online CPUs.
  [[nodiscard]] FoldDecision unfolded(std::string reason) const;

  [[nodiscard]] protocol::Control control() const { return current_.control; }
  [[nodiscard]] const FoldDecision& current() const { return current_; }
  [[nodiscard]] std::optional<std::uint64_t> leaseSeq() const;
  [[nodiscard]] bool fallbackDisabledByHost() const { return hostDisabledFallback_; }

 private:
  struct Lease {
    protocol::Hint hint;
    MonotonicTime expiresAt;
  };

  PlacementPlan plan_;
  FoldControllerConfig config_;
  std::optional<Lease> lease_;
  bool hostDisabledFallback_ = false;
  std::size_t cores_;
  FoldDecision current_;
};

}  // namespace vcpufold::agent
