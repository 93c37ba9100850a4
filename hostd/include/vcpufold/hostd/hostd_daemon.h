#pragma once
// HostdDaemon: the tick loop. Every interval, on one io_context with every
// channel session, the metrics server and the control socket:
//   inventory -> samples -> CPU pool and host load -> decideTick ->
//   a hint per cooperative VM (and the lease renewal) -> status, metrics, logs
// It stops on SIGTERM/SIGINT: hints stop and the guests' leases run out.

#include <memory>
#include <string>

#include "vcpufold/common/rooted_fs.h"
#include "vcpufold/hostd/hostd_config.h"
#include "vcpufold/hostd/inventory.h"
#include "vcpufold/hostd/tick.h"

namespace spdlog {
class logger;
}

namespace vcpufold::hostd {

struct HostdParts {
  HostdConfig config;
  RootedFs fs;
  std::unique_ptr<Inventory> inventory;
  std::shared_ptr<spdlog::logger> log;
};

class HostdDaemon {
 public:
  explicit HostdDaemon(HostdParts parts);
  ~HostdDaemon();
  int run();

  // One tick's worth without talking to any guest: samples the VMs twice, one
  // interval apart, and decides (for --oneshot). Channel states are unknown,
  // so every VM shows as it would without an agent.
  static Expected<TickReport> observeOnce(HostdParts& parts);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vcpufold::hostd
