// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// TOML parsing for both daemons' configuration files, with an error that
// names file:line:column. Include only where the configuration is read.

#include <string>
#include <string_view>
#include <toml++/toml.h>

#include "vcpufold/common/expected.h"

namespace vcpufold {

Expected<toml::table> parseTomlText(std::string_view text, const std::string& source);

}  // namespace vcpufold
