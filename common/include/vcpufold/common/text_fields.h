// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The two things every reader of kernel text files does: split a line into
// fields, and read a field as an unsigned decimal, strictly (istream would
// read "-964" into an unsigned as a huge number; found by fuzzing).

#include <cstdint>
#include <string_view>
#include <vector>

namespace vcpufold {

// The runs of text between any of the separators, empty runs left out.
std::vector<std::string_view> splitFields(std::string_view text, std::string_view separators = " ");

// Digits only, the whole field, within 64 bits.
bool parseDecimal(std::string_view field, std::uint64_t& value);

}  // namespace vcpufold
