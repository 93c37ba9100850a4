// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// KnobWriter: writes sysfs/cgroupfs knobs read-compare-write (only on change),
// and quarantines a knob that keeps failing instead of hammering it: after
// `failuresBeforeQuarantine` consecutive failures it is left alone for a
// quarantine period that doubles on every relapse, up to a maximum.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "vcpufold/common/expected.h"
#include "vcpufold/common/monotonic_clock.h"
#include "vcpufold/common/rooted_fs.h"

namespace vcpufold::agent {

struct QuarantinePolicy {
  int failuresBeforeQuarantine = 3;
  std::chrono::milliseconds firstQuarantine{30'000};
  std::chrono::milliseconds maxQuarantine{600'000};
};

enum class KnobValueKind { Text, CpuList };

enum class KnobOutcome { Unchanged, Written, Quarantined };

class KnobWriter {
 public:
  explicit KnobWriter(RootedFs fs, QuarantinePolicy policy = {});

  // Makes the knob at path hold value. CpuList knobs compare as sets (the
  // kernel prints "0-1" for "0,1"); Text knobs compare without surrounding space.
  Expected<KnobOutcome> write(const std::string& path, std::string_view value, MonotonicTime now,
                              KnobValueKind kind = KnobValueKind::Text);
  [[nodiscard]] bool isQuarantined(const std::string& path, MonotonicTime now) const;
  [[nodiscard]] const RootedFs& fs() const { return fs_; }

 private:
  struct KnobHealth {
    int consecutiveFailures = 0;
    std::optional<MonotonicTime> quarantinedUntil;
    std::chrono::milliseconds nextQuarantine{0};
  };

  RootedFs fs_;
  QuarantinePolicy policy_;
  std::map<std::string, KnobHealth> health_;
};

}  // namespace vcpufold::agent
