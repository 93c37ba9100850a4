// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Text from outside the process (guests, domain metadata, QEMU) made safe for
// a log line: a guest must not be able to forge log lines or hide text.

#include <string>
#include <string_view>

namespace vcpufold {

// Escapes C0 controls (newline included), DEL, C1 controls, the bidi
// overrides and isolates (U+202A..U+202E, U+2066..U+2069), U+2028/U+2029,
// and bytes that are not valid UTF-8, as \xHH or \u{HHHH}; a backslash
// becomes \\. Printable UTF-8 passes unchanged. At most maxBytes of input are
// kept; longer text ends in "...".
std::string escapeForLog(std::string_view text, std::size_t maxBytes = 512);

// The same escapes, but the result is at most maxBytes long and always valid
// UTF-8 without control characters: it is cut between whole characters (an
// escape is never split) and ends in "..." where it was cut. For text a peer
// must decode: a hint's reason.
std::string escapeWithin(std::string_view text, std::size_t maxBytes);

}  // namespace vcpufold
