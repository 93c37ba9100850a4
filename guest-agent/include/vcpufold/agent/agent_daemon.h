// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// AgentDaemon: the agent's event loop. It wires the pure parts together:
//   transport -> protocol::Session -> FoldController -> actuator -> ack
//   (the actuator on a thread of its own, actuator_thread.h: a change the
//   guest's kernel has not made within kAnswerWithin is answered with the
//   CPUs in force, and again with the new ones once it is made)
//   every sample:   a slice of the work the last fold deferred until after
//                   its answer (actuator.h); runnable tasks from /proc/loadavg (demand); a change
//                   that holds is sent to the host at once as a status (demand_watch.h)
//   every interval: CPU hotplug (re-place, re-apply, hello again), steal
//                   ratio, lease expiry and fallback, apply, status, and the
//                   metrics textfile when configured
// It runs until SIGTERM or SIGINT, then unfolds the guest and returns 0.
// SIGHUP reloads the configuration. Under systemd it says READY=1 and pings
// the watchdog from this loop, so a wedged agent is restarted (and unfolded
// by ExecStopPost=).

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "vcpufold/agent/actuator.h"
#include "vcpufold/agent/actuator_thread.h"
#include "vcpufold/agent/agent_config.h"
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
  // The outcome of a slice of deferred work, on the actuator's thread.
  void reportDeferredWork(const CpuSet& fold, const Expected<ApplyResult>& done);
  void sendStatus(double demand);
  void onInterval(MonotonicTime now);
  void checkHotplug(MonotonicTime now);
  void reload();
  [[nodiscard]] FoldControllerConfig controllerConfig() const;
  // ackActuator: what the ack names (none when nothing was applied on purpose); default the actuator's kind.
  void apply(const FoldDecision& decision, MonotonicTime now, std::optional<std::uint64_t> ackSeq,
             std::optional<protocol::Actuator> ackActuator = std::nullopt);
  // The end of a change apply() answered before the kernel had made it.
  void onChangeEnded(MonotonicTime now);
  // What apply() does once the actuator's change has ended: log, record, answer.
  void finishChange(const FoldDecision& decision, const Expected<ApplyResult>& result, MonotonicTime now,
                    std::optional<std::uint64_t> ackSeq, protocol::Actuator ackActuator);
  // An ack of the CPUs in force: with actuator none while a change is still
  // being made (they are what is observed, not what the hint asked for).
  void answerWithCpusInForce(std::uint64_t seq, protocol::Actuator ackActuator);
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
  std::unique_ptr<ActuatorThread> actuatorThread_;  // while run() runs; else this loop calls the actuator
  // How long an answer waits for the guest's kernel to make a change: most
  // changes are made within it (95-220 ms for a first fold on a loaded TCG
  // guest), and hostd waits 3 s for an answer.
  static constexpr std::chrono::milliseconds kAnswerWithin{500};
  // A loop that runs this much after it was due is logged: the guest did not
  // run the agent meanwhile (a starved or paused guest), which tells an
  // overdue answer's cause apart from one the agent itself took.
  static constexpr std::chrono::milliseconds kLateLoopLogged{1000};
  // A change started and answered before its end, and the hint it still owes
  // an answer with the new CPUs.
  struct ChangeInFlight {
    FoldDecision decision;
    std::optional<std::uint64_t> owedAckSeq;
    protocol::Actuator owedAckActuator = protocol::Actuator::None;
    MonotonicTime startedAt;
  };
  std::optional<ChangeInFlight> changeInFlight_;
  // The newest decision that differs from the change in flight: started when it ends.
  std::optional<ChangeInFlight> changeNext_;
  CpuSet applied_;  // in force: what the last change that ended made
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
