// SPDX-License-Identifier: GPL-2.0-or-later
// parseListenAddress: metrics.address as an operator writes it.

#include "vcpufold/common/listen_address.h"

#include <gtest/gtest.h>

namespace vcpufold {
namespace {

TEST(ListenAddress, AcceptsIpv4AndBracketedIpv6) {
  const auto loopback = parseListenAddress("127.0.0.1:9477", "metrics.address");
  ASSERT_TRUE(loopback) << loopback.error().message;
  EXPECT_EQ(loopback->host, "127.0.0.1");
  EXPECT_EQ(loopback->port, 9477);
  EXPECT_FALSE(loopback->ipv6);
  const auto any = parseListenAddress("[::]:9477", "metrics.address");
  ASSERT_TRUE(any) << any.error().message;
  EXPECT_EQ(any->host, "::");
  EXPECT_EQ(any->port, 9477);
  EXPECT_TRUE(any->ipv6);
  const auto v6 = parseListenAddress("[fd00::1]:0", "metrics.address");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "fd00::1");
  EXPECT_EQ(v6->port, 0);
}

TEST(ListenAddress, RefusesWhatCannotBeBoundNamingTheKeyAndTheForm) {
  for (const char* bad : {"9477", "localhost:9477", "::1:9477", "[::1]9477", "[::1:9477", "127.0.0.1:", "127.0.0.1:x",
                          "127.0.0.1:65536", "127.0.0.1:94 77", "300.1.1.1:80", "[127.0.0.1]:80", ":9477"}) {
    const auto parsed = parseListenAddress(bad, "metrics.address");
    ASSERT_FALSE(parsed) << bad;
    EXPECT_NE(parsed.error().message.find("metrics.address \"" + std::string(bad) + "\""), std::string::npos)
        << parsed.error().message;
    EXPECT_NE(parsed.error().message.find("[::]:9477"), std::string::npos) << "says the accepted forms";
  }
}

}  // namespace
}  // namespace vcpufold
