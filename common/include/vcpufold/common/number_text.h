// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Numbers as text for people and for Prometheus, one way everywhere: no
// locale (a decimal comma would break the metrics page and every parser of
// the status table), no printf format parsing on the decision path.

#include <string>

namespace vcpufold {

// As printf's "%.Nf": 3.14159 with 2 decimals is "3.14".
std::string fixedDecimals(double value, int decimals);

// Up to 9 significant digits, shortest form ("0.25", "1e-06", "1234"), and
// Prometheus' spelling of the values that are not finite: NaN, +Inf, -Inf.
std::string metricNumber(double value);

}  // namespace vcpufold
