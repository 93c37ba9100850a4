// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Prometheus's text exposition format (0.0.4), as hostd's metrics page and the
// agent's node_exporter textfile are written: a HELP and TYPE line per family,
// then its samples. Callers pass labels already formatted ("vm=\"a\"").

#include <string>

namespace vcpufold {

// A label value with backslash, double quote and newline escaped.
std::string prometheusLabelValue(const std::string& value);

class PrometheusText {
 public:
  void family(const char* name, const char* type, const char* help);
  void sample(const std::string& name, const std::string& labels, double value);
  std::string take() { return std::move(text_); }

 private:
  std::string text_;
};

}  // namespace vcpufold
