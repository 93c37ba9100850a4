// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/common/config_file.h"

#include "vcpufold/common/rooted_fs.h"

namespace vcpufold {

Expected<std::optional<std::string>> readConfigText(const std::filesystem::path& root, const std::string& path,
                                                    bool explicitPath) {
  const RootedFs fs(explicitPath ? std::filesystem::path("/") : root);
  if (!explicitPath && !fs.exists(path)) return std::optional<std::string>();
  auto text = fs.readFile(path);
  if (!text) return text.error();
  return std::optional<std::string>(std::move(*text));
}

}  // namespace vcpufold
