// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/policy.h"

#include <algorithm>
#include <vector>

namespace vcpufold::hostd {
namespace {

constexpr std::pair<const char*, FoldMode> kModes[] = {
    {"auto", FoldMode::Auto}, {"off", FoldMode::Off}, {"fixed", FoldMode::Fixed}, {"guest", FoldMode::Guest}};

}  // namespace

const char* foldModeName(FoldMode mode) {
  for (const auto& [name, value] : kModes)
    if (value == mode) return name;
  return "?";
}

std::optional<FoldMode> foldModeFromName(std::string_view name) {
  for (const auto& [wire, value] : kModes)
    if (name == wire) return value;
  return std::nullopt;
}

Expected<void> validatePolicy(const FoldPolicy& policy, PolicySpelling spelling) {
  // Problems name each field as the operator wrote it: an XML attribute
  // (min-vcpus="5") or a TOML key (min_vcpus = 5).
  const bool xml = spelling == PolicySpelling::Xml;
  const auto key = [xml](const char* name) {
    std::string spelled = name;
    if (!xml) std::replace(spelled.begin(), spelled.end(), '-', '_');
    return spelled;
  };
  const auto assignment = [&key, xml](const char* name, const std::string& value) {
    return xml ? key(name) + "=\"" + value + "\"" : key(name) + " = " + value;
  };
  std::vector<std::string> problems;
  auto range = [&](const char* name, std::uint32_t value, std::uint32_t max) {
    if (value < 1 || value > max)
      problems.push_back(assignment(name, std::to_string(value)) + " is out of range 1.." + std::to_string(max));
  };
  range("min-vcpus", policy.minVcpus, 4096);
  if (policy.maxVcpus) range("max-vcpus", *policy.maxVcpus, 4096);
  if (policy.weight) range("weight", *policy.weight, 10000);
  if (policy.fixedVcpus) range("vcpus", *policy.fixedVcpus, 4096);
  if (policy.mode == FoldMode::Fixed && !policy.fixedVcpus)
    problems.push_back("mode \"fixed\" needs " + assignment("vcpus", "N"));
  if (policy.mode != FoldMode::Fixed && policy.fixedVcpus)
    problems.push_back(std::string("vcpus is only for mode \"fixed\", not \"") + foldModeName(policy.mode) + "\"");
  if (policy.maxVcpus && policy.minVcpus > *policy.maxVcpus)
    problems.push_back(key("min-vcpus") + " (" + std::to_string(policy.minVcpus) + ") is above " + key("max-vcpus") +
                       " (" + std::to_string(*policy.maxVcpus) + ")");
  if (problems.empty()) return {};
  std::string message;
  for (const auto& problem : problems) message += (message.empty() ? "" : "; ") + problem;
  return Error{message};
}

std::string formatPolicyXml(const FoldPolicy& policy) {
  std::string xml = std::string("<policy mode=\"") + foldModeName(policy.mode) + "\"";
  if (policy.fixedVcpus) xml += " vcpus=\"" + std::to_string(*policy.fixedVcpus) + "\"";
  if (policy.minVcpus != 1) xml += " min-vcpus=\"" + std::to_string(policy.minVcpus) + "\"";
  if (policy.maxVcpus) xml += " max-vcpus=\"" + std::to_string(*policy.maxVcpus) + "\"";
  if (policy.weight) xml += " weight=\"" + std::to_string(*policy.weight) + "\"";
  return xml + "/>";
}

}  // namespace vcpufold::hostd
