// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// vcpufold-hostd policy VM [show | set KEY=VALUE... | clear] [--live] [--config]:
// a VM's policy metadata through libvirt's API, validated by the parser hostd
// reads it with, without writing XML by hand. virsh metadata keeps working on
// the same element (docs/policy.md).

#include <string>
#include <vector>

#include "vcpufold/common/expected.h"
#include "vcpufold/hostd/hostd_app.h"
#include "vcpufold/hostd/policy.h"
#include "vcpufold/hostd/policy_store.h"

namespace vcpufold::hostd {

struct PolicyRequest {
  enum class Action { Show, Set, Clear };
  std::string vm;
  Action action = Action::Show;
  std::vector<std::string> assignments;  // set: KEY=VALUE
  bool live = false;                     // --live
  bool config = false;                   // --config
  bool json = false;                     // show --json
};

// KEY=VALUE pairs, KEY one of the metadata's attributes (mode, vcpus,
// min-vcpus, max-vcpus, weight; "KEY=" unsets it), applied to a policy and
// checked by parsePolicyXml, exactly as hostd will read the result.
Expected<FoldPolicy> applyPolicyAssignments(const FoldPolicy& current, const std::vector<std::string>& assignments);

// Which scopes a request writes: those asked for, each refused with the
// reason when it does not apply (--live on a VM that is not running, --config
// on a transient one); with neither, what the VM has (live and config when it
// runs and is persistent, as both should usually change).
Expected<std::vector<PolicyScope>> policyScopesFor(const PolicyRequest& request, const PolicyStore::DomainState& state);

int runPolicyCommand(const HostdOptions& options, const PolicyRequest& request);

}  // namespace vcpufold::hostd
