// SPDX-License-Identifier: GPL-2.0-or-later
#include "unix_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace vcpufold::testing {
namespace {

int connectUnix(const std::string& path, int flags) {
  sockaddr_un address{};
  if (path.size() >= sizeof address.sun_path) return -1;
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | flags, 0);
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) return fd;
  if (fd >= 0) ::close(fd);
  return -1;
}

sockaddr_in loopback(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  return address;
}

}  // namespace

int connectUnixSocket(const std::string& path) { return connectUnix(path, 0); }

int connectUnixSocketNonBlocking(const std::string& path) { return connectUnix(path, SOCK_NONBLOCK); }

int listenUnixSocket(const std::string& path, int backlog) {
  sockaddr_un address{};
  if (path.size() >= sizeof address.sun_path) return -1;
  ::unlink(path.c_str());
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 && ::listen(fd, backlog) == 0)
    return fd;
  if (fd >= 0) ::close(fd);
  return -1;
}

bool sendAll(int fd, std::string_view bytes, const std::atomic<bool>& stop, std::atomic<std::uint64_t>* sent) {
  while (!bytes.empty() && !stop) {
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EAGAIN) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
    if (sent) *sent += static_cast<std::uint64_t>(n);
  }
  return !stop;
}

int freeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address = loopback(0);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

int connectLoopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const sockaddr_in address = loopback(port);
  if (fd >= 0 && ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) return fd;
  if (fd >= 0) ::close(fd);
  return -1;
}

namespace {

std::string exchange(int port, const std::string& request) {
  const int fd = connectLoopback(port);
  if (fd < 0) return "";
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  (void)::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string response;
  char chunk[8192];
  for (ssize_t n; (n = ::recv(fd, chunk, sizeof chunk, 0)) > 0;) response.append(chunk, static_cast<std::size_t>(n));
  ::close(fd);
  return response;
}

}  // namespace

std::string httpGet(int port, const std::string& path) {
  return exchange(port, "GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n");
}

std::string httpGetBody(int port, const std::string& path) {
  const std::string response = exchange(port, "GET " + path + " HTTP/1.0\r\nHost: localhost\r\n\r\n");
  const auto bodyAt = response.find("\r\n\r\n");
  if (response.rfind("HTTP/1.", 0) != 0 || response.substr(8, 5) != " 200 " || bodyAt == std::string::npos) return "";
  return response.substr(bodyAt + 4);
}

}  // namespace vcpufold::testing
