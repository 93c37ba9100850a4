// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// LogThrottle: a budget of log lines per source and window, so a peer that
// triggers a log line on purpose (a guest sending error frames) cannot flood
// the journal and make it drop everyone else's lines. Pure: time is passed in.

#include <chrono>
#include <cstdint>
#include <optional>

namespace vcpufold {

class LogThrottle {
 public:
  using Clock = std::chrono::steady_clock;

  LogThrottle(std::uint32_t linesPerWindow, std::chrono::milliseconds window)
      : linesPerWindow_(linesPerWindow), window_(window) {}

  // Whether a line may be logged now. When it may and lines were suppressed
  // before it, suppressedBefore() says how many (and is reset by the next call).
  bool allow(Clock::time_point now);
  [[nodiscard]] std::uint64_t suppressedBefore() const { return reportSuppressed_; }
  [[nodiscard]] std::uint64_t suppressedTotal() const { return suppressedTotal_; }

 private:
  std::uint32_t linesPerWindow_;
  std::chrono::milliseconds window_;
  std::optional<Clock::time_point> windowStart_;
  std::uint32_t linesInWindow_ = 0;
  std::uint64_t suppressedPending_ = 0;
  std::uint64_t reportSuppressed_ = 0;
  std::uint64_t suppressedTotal_ = 0;
};

}  // namespace vcpufold
