// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/fold_controller.h"

#include <algorithm>

#include "vcpufold/protocol/cpulist.h"

namespace vcpufold::agent {

FoldController::FoldController(PlacementPlan plan, FoldControllerConfig config)
    : plan_(std::move(plan)), config_(config), cores_(plan_.coreCount()), current_(unfolded("start")) {}

FoldDecision FoldController::unfolded(std::string reason) const {
  return FoldDecision{plan_.forCores(plan_.coreCount()), protocol::Control::None, std::move(reason)};
}

std::optional<std::uint64_t> FoldController::leaseSeq() const {
  if (!lease_) return std::nullopt;
  return lease_->hint.seq;
}

FoldDecision FoldController::onHint(const protocol::Hint& hint, MonotonicTime now) {
  lease_ = Lease{hint, now + std::chrono::milliseconds(hint.ttlMs)};
  hostDisabledFallback_ = hint.policy == protocol::HintPolicy::Off;
  if (hint.policy == protocol::HintPolicy::Off) {
    cores_ = plan_.coreCount();
    current_ = FoldDecision{plan_.forCores(cores_), protocol::Control::Host,
                            "host policy off: all CPUs, fallback off (" + hint.reason + ")"};
    return current_;
  }
  const Placement placement = plan_.forCpus(hint.vcpus);
  cores_ = placement.cores;
  std::string reason = "host hint seq " + std::to_string(hint.seq) + ": " + std::to_string(hint.vcpus) + " vCPUs";
  if (placement.adjusted)
    reason += " -> " + std::to_string(placement.cpus.size()) + " (whole cores within 1.." +
              std::to_string(plan_.forCores(plan_.coreCount()).size()) + ")";
  current_ = FoldDecision{placement.cpus, protocol::Control::Host, reason + " (" + hint.reason + ")"};
  return current_;
}

FoldDecision FoldController::onTopologyChange(PlacementPlan plan) {
  plan_ = std::move(plan);
  const std::string note = "CPU hotplug: " + std::to_string(plan_.forCores(plan_.coreCount()).size()) + " CPUs online";
  if (lease_ && (current_.control == protocol::Control::Host)) {
    const auto expiresAt = lease_->expiresAt;
    const protocol::Hint hint = lease_->hint;
    current_ = onHint(hint, expiresAt);
    lease_->expiresAt = expiresAt;  // re-placing renews nothing
    current_.reason = note + "; " + current_.reason;
    return current_;
  }
  if (current_.control == protocol::Control::Fallback) {
    cores_ = std::clamp<std::size_t>(cores_, 1, plan_.coreCount());
    current_ = FoldDecision{plan_.forCores(cores_), protocol::Control::Fallback,
                            note + "; fallback keeps " + std::to_string(cores_) + " cores"};
    return current_;
  }
  cores_ = plan_.coreCount();
  current_ = FoldDecision{plan_.forCores(cores_), current_.control, note + "; all CPUs"};
  return current_;
}

FoldDecision FoldController::onInterval(MonotonicTime now, std::optional<std::uint32_t> stealBp) {
  std::string leaseNote;
  if (lease_ && now >= lease_->expiresAt) {
    leaseNote = "lease of hint seq " + std::to_string(lease_->hint.seq) + " expired; ";
    lease_.reset();
  }
  if (lease_) return current_;

  if (!config_.fallbackAllowed || hostDisabledFallback_) {
    cores_ = plan_.coreCount();
    current_ = unfolded(leaseNote + (hostDisabledFallback_ ? "fallback off by host policy" : "fallback not allowed"));
    return current_;
  }
  const std::size_t before = cores_;
  std::string law = "steal unknown";
  if (stealBp) {
    const FoldStep step = stealLawStep(config_.law, *stealBp);
    cores_ = coresAfterStep(step, cores_, plan_.coreCount());
    law = "steal " + std::to_string(*stealBp) + " bp (fold above " + std::to_string(config_.law.highBp) +
          ", unfold at or below " + std::to_string(config_.law.lowBp) + ")";
  }
  const CpuSet cpus = plan_.forCores(cores_);
  const std::string change = cores_ == before ? "hold " : (cores_ < before ? "fold to " : "unfold to ");
  current_ = FoldDecision{cpus, protocol::Control::Fallback,
                          leaseNote + "fallback: " + law + ": " + change + protocol::formatCpuList(cpus)};
  return current_;
}

}  // namespace vcpufold::agent
