// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/common/prometheus_text.h"

#include "vcpufold/common/number_text.h"

namespace vcpufold {

std::string prometheusLabelValue(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

void PrometheusText::family(const char* name, const char* type, const char* help) {
  text_ += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void PrometheusText::sample(const std::string& name, const std::string& labels, double value) {
  text_ += name + (labels.empty() ? "" : "{" + labels + "}") + " " + metricNumber(value) + "\n";
}

}  // namespace vcpufold
