// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A TCP listening address as the configuration writes it: "HOST:PORT" with
// HOST an IPv4 address, or "[HOST]:PORT" with HOST an IPv6 address
// ("[::]:9477" listens on every address). Names are refused: a daemon that
// starts before the resolver must not depend on it.

#include <cstdint>
#include <string>
#include <string_view>

#include "vcpufold/common/expected.h"

namespace vcpufold {

struct ListenAddress {
  std::string host;  // the address without brackets: "127.0.0.1", "::"
  std::uint16_t port = 0;
  bool ipv6 = false;
};

// key names the setting in the error ("metrics.address").
Expected<ListenAddress> parseListenAddress(std::string_view text, const std::string& key);

}  // namespace vcpufold
