#pragma once
// QmpClient: a QEMU Machine Protocol client over a UNIX socket, for QEMU run
// without libvirt. Blocking calls, each bounded by a timeout (hostd calls
// them from its inventory refresh, never from a channel handler). The
// greeting and qmp_capabilities happen in connect(); events that arrive
// between answers are kept for drainEvents().

#include <sys/types.h>

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

 private:
  explicit QmpClient(int fd);
  Expected<std::string> readLine(int timeoutMs);

  int fd_;
  pid_t peerPid_ = 0;
  std::string buffer_;
  std::vector<QmpEvent> events_;
};

}  // namespace vcpufold::hostd
