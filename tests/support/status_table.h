// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Reads `vcpufold-hostd status` as a user does: by the column names its
// header line gives, so a test does not break when a column is added.

#include <map>
#include <string>

namespace vcpufold::testing {

// The row of a VM as column name -> value; empty when the VM has no row.
std::map<std::string, std::string> statusRow(const std::string& statusText, const std::string& vm);

}  // namespace vcpufold::testing
