// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Sockets for tests: UNIX stream sockets (close-on-exec) and loopback TCP.

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace vcpufold::testing {

// A connected AF_UNIX stream socket, or -1.
int connectUnixSocket(const std::string& path);
// The same, non-blocking: fails at once (EAGAIN) when the listen queue is full.
int connectUnixSocketNonBlocking(const std::string& path);
// A socket listening on path (a stale file is replaced), or -1.
int listenUnixSocket(const std::string& path, int backlog);

// Writes all of bytes to a stream socket without blocking the caller past
// `stop` (polls in 50 ms steps while the peer does not read). False on an
// error or when stopped; `sent` (if given) counts the bytes written.
bool sendAll(int fd, std::string_view bytes, const std::atomic<bool>& stop, std::atomic<std::uint64_t>* sent = nullptr);

// A TCP port on 127.0.0.1 that was free a moment ago.
int freeLoopbackPort();
// A connected TCP socket to 127.0.0.1:port, or -1.
int connectLoopback(int port);
// GET path from 127.0.0.1:port; the whole response ("" when nothing answers in 5 s).
std::string httpGet(int port, const std::string& path);
// The body of an HTTP/1.0 GET (no chunked encoding, the server closes): for
// servers other than hostd's, such as Prometheus. "" on any failure or a
// status other than 200.
std::string httpGetBody(int port, const std::string& path);

}  // namespace vcpufold::testing
