// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Protocol versions and their negotiation.

#include <cstdint>
#include <optional>
#include <span>

namespace vcpufold::protocol {

inline constexpr std::uint32_t kProtocolVersion = 1;
// Versions this build speaks, ascending. hello is always sent as v1, the
// version every implementation reads; later messages use the agreed one.
inline constexpr std::uint32_t kSupportedVersions[] = {1};
inline constexpr std::uint32_t kHelloVersion = 1;

// The highest version both lists hold, or nullopt when they share none.
std::optional<std::uint32_t> negotiateVersion(std::span<const std::uint32_t> ours,
                                              std::span<const std::uint32_t> theirs);

[[nodiscard]] bool isSupportedVersion(std::uint32_t version);

}  // namespace vcpufold::protocol
