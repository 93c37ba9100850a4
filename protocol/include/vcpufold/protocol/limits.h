// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Wire limits shared by both sides; docs/protocol.md states the same numbers.

#include <cstddef>
#include <cstdint>

namespace vcpufold::protocol {

// A frame is one JSON object and its terminating '\n': at most this many bytes.
inline constexpr std::size_t kMaxFrameBytes = 4096;
// The byte that resets a decoder mid-line. Never valid in UTF-8, so never in a frame.
inline constexpr char kResyncByte = '\xff';
// Deepest JSON nesting accepted; v1 messages need 2 (an array in an object).
inline constexpr std::size_t kMaxJsonDepth = 8;
// Sequence numbers stay within what every JSON implementation holds exactly.
inline constexpr std::uint64_t kMaxSeq = (std::uint64_t{1} << 53) - 1;

}  // namespace vcpufold::protocol
