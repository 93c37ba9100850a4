// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Where both daemons' configuration text comes from. An explicit --config is
// a path on the host and must be readable. The default path lives under
// --root; when no file is there the built-in defaults apply, but a file that
// is there and cannot be read is an error: defaults must not silently replace
// a file the operator wrote.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "vcpufold/common/expected.h"

namespace vcpufold {

// The text, or nullopt for an absent default file.
Expected<std::optional<std::string>> readConfigText(const std::filesystem::path& root, const std::string& path,
                                                    bool explicitPath);

// The parsed file, or the Config's defaults for an absent default file.
template <typename Config>
Expected<Config> loadConfigFile(const std::filesystem::path& root, const std::string& path, bool explicitPath,
                                Expected<Config> (*parse)(std::string_view, const std::string&)) {
  auto text = readConfigText(root, path, explicitPath);
  if (!text) return text.error();
  if (!*text) return Config{};
  return parse(**text, path);
}

}  // namespace vcpufold
