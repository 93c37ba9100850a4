// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/common/listen_address.h"

#include <arpa/inet.h>

#include <array>
#include <charconv>

namespace vcpufold {

Expected<ListenAddress> parseListenAddress(std::string_view text, const std::string& key) {
  const auto refuse = [&](const std::string& why) {
    return Error{key + " \"" + std::string(text) + "\": " + why +
                 " (expected IPv4:PORT such as 127.0.0.1:9477, or [IPv6]:PORT such as [::]:9477)"};
  };
  ListenAddress address;
  std::string_view portText;
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close == std::string_view::npos) return refuse("no ']' after the IPv6 address");
    if (close + 1 >= text.size() || text[close + 1] != ':') return refuse("no ':PORT' after ']'");
    address.host = std::string(text.substr(1, close - 1));
    address.ipv6 = true;
    portText = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) return refuse("no ':PORT'");
    address.host = std::string(text.substr(0, colon));
    if (address.host.find(':') != std::string::npos) return refuse("an IPv6 address needs brackets");
    portText = text.substr(colon + 1);
  }
  std::array<unsigned char, 16> bytes{};
  if (inet_pton(address.ipv6 ? AF_INET6 : AF_INET, address.host.c_str(), bytes.data()) != 1)
    return refuse("\"" + address.host + "\" is not an " + (address.ipv6 ? "IPv6" : "IPv4") + " address");
  unsigned port = 0;
  const auto* end = portText.data() + portText.size();
  const auto parsed = std::from_chars(portText.data(), end, port);
  if (portText.empty() || parsed.ec != std::errc{} || parsed.ptr != end || port > 65535)
    return refuse("the port must be a number 0..65535");
  address.port = static_cast<std::uint16_t>(port);
  return address;
}

}  // namespace vcpufold
