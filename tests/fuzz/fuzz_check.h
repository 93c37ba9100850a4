// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// What every fuzz target uses: a check that aborts (libFuzzer reports it as a
// crash with the input), and the input as text.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace vcpufold::fuzz {

inline void check(bool condition) {
  if (!condition) std::abort();
}

inline std::string_view textOf(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace vcpufold::fuzz
