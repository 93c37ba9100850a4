// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Fleet rules: ordered [[rule]] tables of hostd.toml that give VMs a default
// policy by what they are (name glob, OpenStack Nova flavor, libvirt
// partition), so a thousand VMs need one file, not a thousand commands. A
// VM's own policy (its metadata, or its [[vm]] table) always wins; the first
// rule that matches gives the rest theirs; else the built-in default.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "vcpufold/hostd/policy.h"
#include "vcpufold/hostd/vm_record.h"

namespace vcpufold::hostd {

struct FleetRule {
  // Shell globs (fnmatch: * ? [...]); every one given must match.
  std::optional<std::string> name;        // the VM's name
  std::optional<std::string> novaFlavor;  // nova:flavor's name in the domain's Nova metadata
  std::optional<std::string> partition;   // the domain's <resource><partition>
  FoldPolicy policy;
  friend bool operator==(const FleetRule&, const FleetRule&) = default;
};

bool ruleMatches(const FleetRule& rule, const VmRecord& vm);

// "rule 2 (name=web-*, nova_flavor=m1.*)": how status and logs name a rule (index from 1).
std::string describeRule(const FleetRule& rule, std::size_t index);

// Gives each VM whose policy is the built-in default the policy of the first
// rule that matches it, and says where every VM's policy came from.
void applyFleetRules(const std::vector<FleetRule>& rules, std::vector<VmRecord>& vms);

}  // namespace vcpufold::hostd
