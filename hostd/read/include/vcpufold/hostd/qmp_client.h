// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// QmpClient: a QEMU Machine Protocol client over a UNIX socket, for QEMU run
// without libvirt. Calls wait, each bounded by its timeout (hostd makes them
// on its inventory thread, never on the control thread); the socket is
// non-blocking, so connecting to a monitor with a full queue fails at once.
// The greeting and qmp_capabilities happen in connect(); events that arrive
// between answers are kept for drainEvents(), at most 64 (oldest dropped).
// The peer is untrusted: lines are bounded (1 MiB), JSON nesting is bounded,
// and a reply of any shape is an answer or an Error, never an exception.

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "vcpufold/common/expected.h"

namespace vcpufold::hostd {

struct QmpVcpu {
  unsigned cpuIndex = 0;
  int threadId = 0;  // host TID of the vCPU thread
  friend bool operator==(const QmpVcpu&, const QmpVcpu&) = default;
};

// query-cpus-fast's "return" array, strictly: every entry needs cpu-index and thread-id.
Expected<std::vector<QmpVcpu>> parseQueryCpusFast(const nlohmann::json& result);
// The same from the answer's text (what QmpClient::execute returns).
Expected<std::vector<QmpVcpu>> parseQueryCpusJson(const std::string& answer);

// One line from a QEMU monitor, classified. Any JSON shape is accepted here;
// what is not JSON, not an object, or nested deeper than 32 is an Error.
struct QmpMessage {
  enum class Kind { Return, Error, Event, Greeting, Other };
  Kind kind = Kind::Other;
  std::string text;        // Return: the value as JSON; Error: its desc; Event: its name; Greeting: as JSON
  std::string detailJson;  // Event: its data as JSON
};
Expected<QmpMessage> parseQmpMessage(const std::string& line);

struct QmpEvent {
  std::string name;       // "SHUTDOWN", "VSERPORT_CHANGE", ...
  std::string detailJson;  // its "data", as JSON text
};

class QmpClient {
 public:
  static Expected<std::unique_ptr<QmpClient>> connect(const std::string& socketPath, int timeoutMs);
  ~QmpClient();
  QmpClient(const QmpClient&) = delete;
  QmpClient& operator=(const QmpClient&) = delete;

  // Runs a command; returns its "return" as JSON text, or the QMP error.
  Expected<std::string> execute(const std::string& command, int timeoutMs);
  // Events received so far, and any waiting on the socket now (no blocking).
  std::vector<QmpEvent> drainEvents();
  [[nodiscard]] bool closed() const { return fd_ < 0; }
  // The QEMU process at the other end (SO_PEERCRED).
  [[nodiscard]] pid_t peerPid() const { return peerPid_; }
  [[nodiscard]] std::uint64_t eventsDropped() const { return eventsDropped_; }

 private:
  explicit QmpClient(int fd);
  Expected<std::string> readLine(int timeoutMs);
  void keepEvent(QmpEvent event);

  int fd_;
  pid_t peerPid_ = 0;
  std::string buffer_;
  std::vector<QmpEvent> events_;
  std::uint64_t eventsDropped_ = 0;
};

}  // namespace vcpufold::hostd
