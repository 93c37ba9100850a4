// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/common/toml_text.h"

namespace vcpufold {

Expected<toml::table> parseTomlText(std::string_view text, const std::string& source) {
  try {
    return toml::parse(text, source);
  } catch (const toml::parse_error& error) {
    const auto& where = error.source().begin;
    return Error{source + ":" + std::to_string(where.line) + ":" + std::to_string(where.column) + ": " +
                 std::string(error.description())};
  }
}

}  // namespace vcpufold
