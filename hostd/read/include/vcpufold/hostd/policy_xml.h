// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The policy as libvirt stores it: a metadata element in vcpufold's namespace.
// Read with libxml2, so it lives with the inventory, not with the policy model.

#include <string_view>

#include "vcpufold/common/expected.h"
#include "vcpufold/hostd/policy.h"

namespace vcpufold::hostd {

// Parses the metadata element libvirt returns for our namespace. Strict: one
// element named "policy", known attributes only, every value in range; the
// error says which attribute is wrong and why.
Expected<FoldPolicy> parsePolicyXml(std::string_view xml);

}  // namespace vcpufold::hostd
