// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/fleet_rule.h"

#include <fnmatch.h>

namespace vcpufold::hostd {
namespace {

bool globMatches(const std::optional<std::string>& glob, const std::optional<std::string>& value) {
  if (!glob) return true;
  return value && ::fnmatch(glob->c_str(), value->c_str(), 0) == 0;
}

}  // namespace

bool ruleMatches(const FleetRule& rule, const VmRecord& vm) {
  return globMatches(rule.name, vm.name) && globMatches(rule.novaFlavor, vm.novaFlavor) &&
         globMatches(rule.partition, vm.partition);
}

std::string describeRule(const FleetRule& rule, std::size_t index) {
  std::string matchers;
  const auto add = [&matchers](const char* key, const std::optional<std::string>& glob) {
    if (glob) matchers += (matchers.empty() ? "" : ", ") + std::string(key) + "=" + *glob;
  };
  add("name", rule.name);
  add("nova_flavor", rule.novaFlavor);
  add("partition", rule.partition);
  return "rule " + std::to_string(index) + " (" + matchers + ")";
}

void applyFleetRules(const std::vector<FleetRule>& rules, std::vector<VmRecord>& vms) {
  for (VmRecord& vm : vms) {
    if (vm.policySource != PolicySource::Default) continue;
    for (std::size_t i = 0; i < rules.size(); ++i) {
      if (!ruleMatches(rules[i], vm)) continue;
      vm.policy = rules[i].policy;
      vm.policySource = PolicySource::Rule;
      vm.policyRule = describeRule(rules[i], i + 1);
      break;
    }
  }
}

}  // namespace vcpufold::hostd
