// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/protocol/version.h"

#include <gtest/gtest.h>

#include <vector>

using vcpufold::protocol::negotiateVersion;

TEST(Version, HighestCommonWins) {
  const std::vector<std::uint32_t> ours{1, 2, 3};
  EXPECT_EQ(negotiateVersion(ours, std::vector<std::uint32_t>{1, 2}), 2u);
  EXPECT_EQ(negotiateVersion(ours, std::vector<std::uint32_t>{3, 1, 9}), 3u);
  EXPECT_EQ(negotiateVersion(std::vector<std::uint32_t>{1}, std::vector<std::uint32_t>{1, 2}), 1u);
}

TEST(Version, NoneInCommon) {
  EXPECT_FALSE(negotiateVersion(std::vector<std::uint32_t>{1}, std::vector<std::uint32_t>{2, 3}));
  EXPECT_FALSE(negotiateVersion(std::vector<std::uint32_t>{1}, std::vector<std::uint32_t>{}));
}

TEST(Version, ThisBuildSpeaksItsOwnVersion) {
  EXPECT_TRUE(vcpufold::protocol::isSupportedVersion(vcpufold::protocol::kProtocolVersion));
  EXPECT_TRUE(vcpufold::protocol::isSupportedVersion(vcpufold::protocol::kHelloVersion));
  EXPECT_FALSE(vcpufold::protocol::isSupportedVersion(0));
}
