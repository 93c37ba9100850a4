// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Two small servers on the daemon's io_context that hand out text:
//   MetricsServer  HTTP on a TCP address (default 127.0.0.1:9477), GET /metrics;
//                  at most 32 open exchanges (a new one closes the oldest),
//                  2 s per exchange, accept retried after 100 ms on EMFILE
//   ControlServer  a UNIX socket (mode 0600) that writes the status table to
//                  each root client (checked with SO_PEERCRED) and closes
// Requests are bounded in size and time; a slow client cannot hold either.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "vcpufold/common/expected.h"

namespace boost::asio {
class io_context;
}

namespace vcpufold::hostd {

using TextSource = std::function<std::string()>;

class MetricsServer {
 public:
  // address: "HOST:PORT".
  static Expected<std::unique_ptr<MetricsServer>> start(boost::asio::io_context& io, const std::string& address,
                                                        TextSource metrics);
  ~MetricsServer();
  [[nodiscard]] unsigned short port() const;
  [[nodiscard]] std::uint64_t evictedConnections() const;
  [[nodiscard]] std::uint64_t acceptErrors() const;

 private:
  struct Impl;
  explicit MetricsServer(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

// The control socket's requests, one line each; the answer follows and the
// socket closes.
inline constexpr const char* kControlStatusRequest = "status";           // the status table
inline constexpr const char* kControlStatusJsonRequest = "status json";  // the same as JSON (status_json.h)

struct ControlSources {
  TextSource table;
  TextSource json;
};

class ControlServer {
 public:
  static Expected<std::unique_ptr<ControlServer>> start(boost::asio::io_context& io, const std::string& socketPath,
                                                        ControlSources pages);
  ~ControlServer();

 private:
  struct Impl;
  explicit ControlServer(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

// The client side of `vcpufold-hostd status`: sends `request` and reads the
// answer, giving up after `timeout` (a wedged daemon must not hang the caller).
Expected<std::string> readControlSocket(const std::string& socketPath, const std::string& request = kControlStatusRequest,
                                        std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));

}  // namespace vcpufold::hostd
