// SPDX-License-Identifier: GPL-2.0-or-later
// Who serves a hint socket: the peer's pid against the domain's QEMU (libvirt),
// and the socket file in the QMP directory, looked at again at every connect.

#include "vcpufold/hostd/channel_peer.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>

#include "fixture_tree.h"

using namespace vcpufold::hostd;
using vcpufold::testing::FixtureTree;

namespace {

// A connected pair; the peer of either end is this process.
struct SocketPair {
  SocketPair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0); }
  ~SocketPair() {
    ::close(fds[0]);
    ::close(fds[1]);
  }
  int fds[2] = {-1, -1};
};

}  // namespace

TEST(ChannelPeer, OnlyTheDomainsQemuServesItsChannel) {
  SocketPair pair;
  ASSERT_EQ(*peerPidOf(pair.fds[0]), ::getpid());
  FixtureTree tree("");
  tree.write("/run/libvirt/qemu/web.pid", std::to_string(::getpid()));
  EXPECT_FALSE(refusedLibvirtPeer(tree.fs(), "web", pair.fds[0])) << "the peer is web's QEMU";
  // Another process serves the path the domain's XML names.
  tree.write("/run/libvirt/qemu/web.pid", "1");
  tree.write("/proc/" + std::to_string(::getpid()) + "/comm", "socat\n");
  const auto refused = refusedLibvirtPeer(tree.fs(), "web", pair.fds[0]);
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("not the domain's QEMU (pid 1)"), std::string::npos) << *refused;
  // libvirt itself may hold the listening socket it passed to QEMU.
  tree.write("/proc/" + std::to_string(::getpid()) + "/comm", "virtqemud\n");
  EXPECT_FALSE(refusedLibvirtPeer(tree.fs(), "web", pair.fds[0]));
  // No pid file: who the QEMU is cannot be told, so nobody is.
  EXPECT_TRUE(refusedLibvirtPeer(tree.fs(), "gone", pair.fds[0]));
}

TEST(ChannelPeer, ASocketFileIsLookedAtAgainAtEveryConnect) {
  FixtureTree tree("");
  tree.write("/dir/other", "not a socket");
  const std::string dir = tree.fs().resolve("/dir").string();
  std::filesystem::create_symlink(dir + "/other", dir + "/vm.hint.sock");
  auto refused = refusedSocketFile(dir + "/vm.hint.sock", std::nullopt);
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("a symlink"), std::string::npos) << *refused;
  refused = refusedSocketFile(dir + "/other", std::nullopt);
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("not a socket"), std::string::npos) << *refused;
  EXPECT_FALSE(refusedSocketFile(dir + "/absent", std::nullopt)) << "gone: the connect says so";
  EXPECT_TRUE(refusedSocketFile("/" + std::string(200, 'x'), std::nullopt)) << "too long for a UNIX socket";
}
