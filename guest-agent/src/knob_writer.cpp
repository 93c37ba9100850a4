// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/knob_writer.h"

#include <algorithm>

#include "vcpufold/protocol/cpulist.h"

namespace vcpufold::agent {
namespace {

std::string_view trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \n\t");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \n\t");
  return text.substr(first, last - first + 1);
}

bool sameValue(std::string_view current, std::string_view wanted, KnobValueKind kind) {
  if (kind == KnobValueKind::CpuList) {
    auto a = protocol::parseCpuList(trimmed(current));
    auto b = protocol::parseCpuList(trimmed(wanted));
    return a && b && *a == *b;
  }
  return trimmed(current) == trimmed(wanted);
}

}  // namespace

KnobWriter::KnobWriter(RootedFs fs, QuarantinePolicy policy) : fs_(std::move(fs)), policy_(policy) {}

bool KnobWriter::isQuarantined(const std::string& path, MonotonicTime now) const {
  auto it = health_.find(path);
  return it != health_.end() && it->second.quarantinedUntil && now < *it->second.quarantinedUntil;
}

Expected<KnobOutcome> KnobWriter::write(const std::string& path, std::string_view value, MonotonicTime now,
                                        KnobValueKind kind) {
  if (isQuarantined(path, now)) return KnobOutcome::Quarantined;
  KnobHealth& health = health_[path];
  auto current = fs_.readFile(path, 64 * 1024);
  if (current && sameValue(*current, value, kind)) {
    health.consecutiveFailures = 0;
    return KnobOutcome::Unchanged;
  }
  auto written = fs_.writeExisting(path, value);
  if (written) {
    health.consecutiveFailures = 0;
    health.nextQuarantine = std::chrono::milliseconds(0);
    return KnobOutcome::Written;
  }
  if (++health.consecutiveFailures >= policy_.failuresBeforeQuarantine) {
    health.nextQuarantine = health.nextQuarantine.count() == 0
                                ? policy_.firstQuarantine
                                : std::min(health.nextQuarantine * 2, policy_.maxQuarantine);
    health.quarantinedUntil = now + health.nextQuarantine;
    health.consecutiveFailures = 0;
    return written.error().withContext("quarantined for " + std::to_string(health.nextQuarantine.count() / 1000) +
                                       " s after repeated failures");
  }
  return written.error();
}

}  // namespace vcpufold::agent
