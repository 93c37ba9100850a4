// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// AgentDaemon: the agent's event loop. It wires the pure parts together:
//   transport -> protocol::Session -> FoldController -> actuator -> ack
//   every sample:   a slice of the work the last fold deferred until after
//                   its answer (actuator.h), on a thread of its own
//                   (deferred_work_thread.h); runnable tasks from /proc/loadavg (demand); a change
//                   that holds is sent to the host at once as a status (demand_watch.h)
//   every interval: CPU hotplug (re-place, re-apply, hello again), steal
//                   ratio, lease expiry and fallback, apply, status, and the
//                   metrics textfile when configured
// It runs until SIGTERM or SIGINT, then unfolds the guest and returns 0.
// SIGHUP reloads the configuration. Under systemd it says READY=1 and pings
// the watchdog from this loop, so a wedged agent is restarted (and unfolded
// by ExecStopPost=).

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "vcpufold/agent/actuator.h"
#include "vcpufold/agent/agent_config.h"
#include "vcpufold/agent/deferred_work_thread.h"
#include "vcpufold/agent/demand_watch.h"
#include "vcpufold/agent/fold_controller.h"
#include "vcpufold/agent/fold_recheck.h"
#include "vcpufold/agent/kernel_class.h"
#include "vcpufold/agent/steal_law.h"
#include "vcpufold/agent/topology.h"
#include "vcpufold/agent/transport.h"
#include "vcpufold/common/monotonic_clock.h"
#include "vcpufold/common/rooted_fs.h"
#include "vcpufold/protocol/messages.h"
#include "vcpufold/protocol/session.h"

namespace spdlog {
class logger;
}

namespace vcpufold::agent {

struct AgentDaemonParts {
  AgentConfig config;
  RootedFs fs;
  Topology topology;
  std::vector<protocol::Actuator> availableActuators;  // best first, for hello
  std::unique_ptr<Actuator> actuator;
  std::unique_ptr<Transport> transport;
  // Set on bare metal and Xen dom0: hints are acknowledged with all online
  // CPUs and actuator none, and the steal-time fallback never runs.
  std::optional<std::string> foldingRefused;
  // The guest's kernel class (kernel_class.h). When auto hints do not fold it
  // (autoFoldDeclined says why), they are acknowledged with all online CPUs
  // and actuator none, and the steal-time fallback never runs; hints of
  // policy fixed and off are applied as everywhere.
  KernelClass kernelClass = KernelClass::Unknown;
  std::optional<std::string> autoFoldDeclined;
  std::function<Expected<AgentConfig>()> reloadConfig;  // SIGHUP; none: reload is refused
  std::shared_ptr<spdlog::logger> log;
};

class AgentDaemon {
 public:
  explicit AgentDaemon(AgentDaemonParts parts);
  ~AgentDaemon();
  // Blocks until SIGTERM/SIGINT; unfolds before returning. Returns an exit code.
  int run();

 private:
  void onTransportEvent(const TransportEvent& event, MonotonicTime now);
  // Writes what the session asks to send and acts on its events.
  void handle(const protocol::SessionOutput& out, MonotonicTime now);
  void onHint(const protocol::Hint& hint, MonotonicTime now);
  void onSample(MonotonicTime now);
  // The outcome of a slice of deferred work, on the deferred work's thread.
  void reportDeferredWork(const Expected<ApplyResult>& done);
  void sendStatus(double demand);
  void onInterval(MonotonicTime now);
  void checkHotplug(MonotonicTime now);
  void reload();
  [[nodiscard]] FoldControllerConfig controllerConfig() const;
  // ackActuator: what the ack names (none when nothing was applied on purpose); default the actuator's kind.
  void apply(const FoldDecision& decision, MonotonicTime now, std::optional<std::uint64_t> ackSeq,
             std::optional<protocol::Actuator> ackActuator = std::nullopt);
  [[nodiscard]] protocol::Hello ownHello() const;
  void sendHello(MonotonicTime now);
  void send(const protocol::Message& message);
  void sendError(std::optional<std::uint64_t> seq, const std::string& reason, MonotonicTime now);
  Expected<StealReading> readStat() const;
  // running false: the last write, as the agent stops. A failed write is
  // logged (once until it works again) and never touches folding.
  void writeMetricsTextfile(MonotonicTime now, bool running);

  AgentDaemonParts parts_;
  FoldController controller_;
  // Held by whoever calls the actuator: this loop, or the deferred work's
  // thread. applied_ and appliedControl_ change only under it.
  std::mutex actuatorMutex_;
  std::unique_ptr<DeferredWorkThread> deferredWork_;  // while run() runs
  CpuSet applied_;
  protocol::Control appliedControl_ = protocol::Control::None;
  // The same fold again goes to the actuator at most every this many
  // intervals once a pass found it in place (fold_recheck.h).
  static constexpr unsigned kQuietPassesEvery = 10;
  FoldRecheck recheck_;  // this loop's
  std::optional<StealReading> lastStat_;
  std::uint32_t lastStealBp_ = 0;
  double lastDemand_ = 0;
  std::optional<std::uint64_t> lastHintSeq_;
  MonotonicTime lastHintAt_;
  bool textfileFailing_ = false;
  DemandWatch demandWatch_;
  protocol::Session session_;  // the protocol; this loop does the transport, timers and logs
  int signalFd_ = -1;
  bool refusalLogged_ = false;
  bool declineLogged_ = false;
  std::string onlineText_;  // the online CPU list as last read, to notice hotplug
};

}  // namespace vcpufold::agent
