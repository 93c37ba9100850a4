// SPDX-License-Identifier: GPL-2.0-or-later
// Both transports the agent talks to hostd through, on real descriptors: a
// UNIX socket it listens on (as QEMU's chardev socket is used by the tests
// and benches), and a character device found by its virtio port name. No
// virtio-serial device exists outside a guest, so the device here is a
// pseudo-terminal: the same open/read/write/poll calls, found through the
// same sysfs name file.

#include "vcpufold/agent/transport.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "fixture_tree.h"

namespace vcpufold::agent {
namespace {

using Kind = TransportEvent::Kind;

// Runs the transport as the agent's loop does until `until` holds or 3 s pass.
std::vector<TransportEvent> pumpUntil(Transport& transport, const std::function<bool(const TransportEvent&)>& until) {
  using std::chrono::milliseconds;
  std::vector<TransportEvent> seen;
  const MonotonicTime deadline = monotonicNow() + milliseconds(3000);
  while (monotonicNow() < deadline) {
    MonotonicTime wakeAt = monotonicNow() + milliseconds(50);
    auto fds = transport.pollFds(monotonicNow(), wakeAt);
    const auto untilWake = std::chrono::ceil<milliseconds>(wakeAt - monotonicNow()).count();
    ::poll(fds.data(), fds.size(), static_cast<int>(std::clamp<std::int64_t>(untilWake, 0, 50)));
    std::vector<TransportEvent> events;
    transport.service(fds, monotonicNow(), events);
    for (const auto& event : events) {
      seen.push_back(event);
      if (until(event)) return seen;
    }
  }
  ADD_FAILURE() << "no such event within 3 s; saw " << seen.size();
  return seen;
}

bool is(const std::vector<TransportEvent>& events, Kind kind) { return !events.empty() && events.back().kind == kind; }

std::string dataUntil(Transport& transport, std::size_t bytes) {
  std::string data;
  pumpUntil(transport, [&data, bytes](const TransportEvent& event) {
    if (event.kind == Kind::Data) data += event.text;
    return data.size() >= bytes;
  });
  return data;
}

int connectTo(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string readSome(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 3000) <= 0) return "";
  char buffer[256];
  const ssize_t got = ::read(fd, buffer, sizeof buffer);
  return got > 0 ? std::string(buffer, static_cast<std::size_t>(got)) : "";
}

}  // namespace

TEST(UnixListenTransport, OneHostAtATimeBothWaysAndAgainAfterItLeaves) {
  testing::FixtureTree tree("");
  const std::string path = (tree.root() / "hint.sock").string();
  auto transport = makeTransport(tree.fs(), "unix-listen:" + path, "unused");
  ASSERT_TRUE(transport) << transport.error().message;
  Transport& t = **transport;
  EXPECT_EQ(t.describe(), "unix-listen:" + path);
  EXPECT_FALSE(t.connected());
  EXPECT_FALSE(t.send("early")) << "nothing to send to yet";
  auto events = pumpUntil(t, [](const TransportEvent& e) { return e.kind == Kind::Note; });
  EXPECT_EQ(events.back().text, "listening on " + path);

  for (int round = 0; round < 2; ++round) {
    const int host = connectTo(path);
    ASSERT_GE(host, 0) << "round " << round;
    EXPECT_TRUE(is(pumpUntil(t, [](const TransportEvent& e) { return e.kind == Kind::Connected; }), Kind::Connected));
    EXPECT_TRUE(t.connected());
    ASSERT_EQ(::write(host, "frame-in", 8), 8);
    EXPECT_EQ(dataUntil(t, 8), "frame-in");
    EXPECT_TRUE(t.send("frame-out"));
    EXPECT_EQ(readSome(host), "frame-out");
    ::close(host);
    events = pumpUntil(t, [](const TransportEvent& e) { return e.kind == Kind::Disconnected; });
    EXPECT_EQ(events.back().text, "host closed the connection");
    EXPECT_FALSE(t.connected());
  }
  transport->reset();
  EXPECT_FALSE(std::filesystem::exists(path)) << "the socket is removed when the agent stops";
}

TEST(UnixListenTransport, AnEmptyPathIsRefused) {
  const auto transport = makeTransport(RootedFs("/"), "unix-listen:", "unused");
  ASSERT_FALSE(transport);
  EXPECT_EQ(transport.error().message, "unix-listen: needs a socket path");
}

TEST(VirtioPortTransport, WaitsForThePortFindsItByNameThenBothWaysUntilTheHostLeaves) {
  int hostSide = -1, guestSide = -1;
  char device[128] = {};
  ASSERT_EQ(::openpty(&hostSide, &guestSide, device, nullptr, nullptr), 0);
  ::close(guestSide);  // the transport opens the device itself
  termios raw{};
  ::tcgetattr(hostSide, &raw);
  ::cfmakeraw(&raw);
  ::tcsetattr(hostSide, TCSANOW, &raw);

  testing::FixtureTree tree("");
  tree.write("/sys/class/virtio-ports/vport0p1/name", "org.qemu.guest_agent.0\n");
  auto transport = makeTransport(tree.fs(), "", "org.vcpufold.hint.0");
  ASSERT_TRUE(transport) << transport.error().message;
  Transport& t = **transport;
  // No port of that name yet (the channel is hot-plugged later): say so once, keep looking.
  auto events = pumpUntil(t, [](const TransportEvent& e) { return e.kind == Kind::Note; });
  EXPECT_EQ(events.back().text, "no virtio port named org.vcpufold.hint.0 in /sys/class/virtio-ports; retrying");
  EXPECT_FALSE(t.connected());

  tree.write("/sys/class/virtio-ports/vport0p2/name", "org.vcpufold.hint.0\n");
  std::filesystem::create_directories(tree.root() / "dev");
  std::filesystem::create_symlink(device, tree.root() / "dev/vport0p2");
  const auto found = findVirtioPort(tree.fs(), "org.vcpufold.hint.0");
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(*found, "/dev/vport0p2");
  events = pumpUntil(t, [](const TransportEvent& e) { return e.kind == Kind::Connected; });
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events.front().text, "opened /dev/vport0p2");
  EXPECT_EQ(t.describe(), "virtio port /dev/vport0p2 (org.vcpufold.hint.0)");
  ASSERT_EQ(::write(hostSide, "hello", 5), 5);
  EXPECT_EQ(dataUntil(t, 5), "hello");
  EXPECT_TRUE(t.send("ack"));
  EXPECT_EQ(readSome(hostSide), "ack");

  // The host end closes: reads give end-of-file, as a virtio port with no host does.
  ::close(hostSide);
  events = pumpUntil(t, [](const TransportEvent& e) { return e.kind == Kind::Disconnected; });
  EXPECT_EQ(events.back().text, "host closed the port");
  EXPECT_FALSE(t.connected());
  EXPECT_FALSE(t.send("late")) << "nothing is queued for a host that is not there";
}

}  // namespace vcpufold::agent
