// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/common/text_fields.h"

#include <algorithm>
#include <charconv>

namespace vcpufold {

std::vector<std::string_view> splitFields(std::string_view text, std::string_view separators) {
  std::vector<std::string_view> fields;
  for (std::size_t pos = 0; pos < text.size();) {
    const auto start = text.find_first_not_of(separators, pos);
    if (start == std::string_view::npos) break;
    const auto stop = std::min(text.find_first_of(separators, start), text.size());
    fields.push_back(text.substr(start, stop - start));
    pos = stop;
  }
  return fields;
}

bool parseDecimal(std::string_view field, std::uint64_t& value) {
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  return !field.empty() && error == std::errc() && end == field.data() + field.size();
}

}  // namespace vcpufold
