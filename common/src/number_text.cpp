// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/common/number_text.h"

#include <charconv>
#include <cmath>
#include <system_error>

namespace vcpufold {

std::string fixedDecimals(double value, int decimals) {
  char text[352];  // the longest double in fixed notation, with room for decimals
  const auto written = std::to_chars(text, text + sizeof text, value, std::chars_format::fixed, decimals);
  if (written.ec != std::errc{}) return "?";
  return std::string(text, written.ptr);
}

std::string metricNumber(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char text[32];
  // Whole numbers (counters, Unix timestamps) exactly, up to 2^53; others to
  // nine significant digits.
  if (std::fabs(value) < 9007199254740992.0 && value == std::trunc(value)) {
    const auto whole = std::to_chars(text, text + sizeof text, static_cast<long long>(value));
    return std::string(text, whole.ptr);
  }
  const auto written = std::to_chars(text, text + sizeof text, value, std::chars_format::general, 9);
  if (written.ec != std::errc{}) return "NaN";
  return std::string(text, written.ptr);
}

}  // namespace vcpufold
