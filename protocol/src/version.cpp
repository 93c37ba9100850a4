// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/protocol/version.h"

#include <algorithm>

namespace vcpufold::protocol {

std::optional<std::uint32_t> negotiateVersion(std::span<const std::uint32_t> ours,
                                              std::span<const std::uint32_t> theirs) {
  std::optional<std::uint32_t> best;
  for (std::uint32_t version : ours)
    if (std::find(theirs.begin(), theirs.end(), version) != theirs.end() && (!best || version > *best))
      best = version;
  return best;
}

bool isSupportedVersion(std::uint32_t version) {
  return std::find(std::begin(kSupportedVersions), std::end(kSupportedVersions), version) !=
         std::end(kSupportedVersions);
}

}  // namespace vcpufold::protocol
