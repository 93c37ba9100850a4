// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// HostdDaemon: two threads.
//   the inventory thread (InventoryWorker): inventory -> samples -> CPU pool
//     and host CPU time, once per interval, into a snapshot; only it makes
//     calls that can block (libvirt, QMP, /proc);
//   the control thread: one io_context with every channel session, the
//     metrics server and the control socket. Each snapshot is decided on as it
//     arrives (decideTick -> a hint per VM); every interval the tick renews
//     every lease, and decides on missing inputs when no fresh snapshot came
//     (hints held, then withdrawn: see tick.h). It pings the systemd watchdog.
// SIGTERM/SIGINT stop it: hints stop and the guests' leases run out. SIGHUP
// reloads the configuration.

#include <functional>
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
  std::function<Expected<HostdConfig>()> reloadConfig;  // SIGHUP; none: reload is refused
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
