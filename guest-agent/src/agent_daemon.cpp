// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/agent_daemon.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/signalfd.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "vcpufold/agent/config_reload.h"
#include "vcpufold/agent/metrics_textfile.h"
#include "vcpufold/agent/own_priority.h"
#include "vcpufold/agent/version.h"
#include "vcpufold/common/daemon_support.h"
#include "vcpufold/common/monotonic_clock.h"
#include "vcpufold/common/proc_loadavg.h"
#include "vcpufold/common/system_paths.h"
#include "vcpufold/protocol/codec.h"
#include "vcpufold/protocol/cpulist.h"
#include "vcpufold/protocol/limits.h"
#include "vcpufold/protocol/version.h"

namespace vcpufold::agent {
namespace {

std::vector<std::uint32_t> supportedVersions() {
  return {std::begin(protocol::kSupportedVersions), std::end(protocol::kSupportedVersions)};
}

// Milliseconds on CLOCK_MONOTONIC, as the debug lines print them, to line up with hostd's log.
double monotonicMsOf(MonotonicTime time) {
  return std::chrono::duration<double, std::milli>(time.time_since_epoch()).count();
}

}  // namespace

AgentDaemon::AgentDaemon(AgentDaemonParts parts)
    : parts_(std::move(parts)),
      controller_(PlacementPlan(parts_.topology), controllerConfig()),
      applied_(parts_.topology.online),
      session_(ownHello()) {}

FoldControllerConfig AgentDaemon::controllerConfig() const {
  // The fallback folds too: never where folding is refused or declined.
  const bool allowed = !parts_.foldingRefused && !parts_.autoFoldDeclined && parts_.config.fallbackEnabled;
  return FoldControllerConfig{
      allowed, StealLawConfig{parts_.config.intervalMs, parts_.config.highThresholdBp, parts_.config.lowThresholdBp}};
}

AgentDaemon::~AgentDaemon() {
  if (signalFd_ >= 0) ::close(signalFd_);
}

Expected<StealReading> AgentDaemon::readStat() const {
  auto text = parts_.fs.readFile(paths::kProcStat);
  if (!text) return text.error();
  auto sample = parseProcStat(*text);
  if (!sample) return sample.error();
  return stealReadingOf(*sample, monotonicNow());
}

int AgentDaemon::run() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  ::sigprocmask(SIG_BLOCK, &signals, nullptr);
  signalFd_ = ::signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK);
  ::signal(SIGPIPE, SIG_IGN);

  auto& log = *parts_.log;
  log.info(
      "vcpufold-agent {} on {}: {} online CPUs in {} cores ({} per core), {} NUMA node(s), housekeeping {}; "
      "actuator {}; fallback {}; kernel class {}: {}",
      kAgentVersion, parts_.transport->describe(), parts_.topology.online.size(), parts_.topology.cores.size(),
      parts_.topology.threadsPerCore, parts_.topology.numaNodes, protocol::formatCpuList(parts_.topology.housekeeping),
      protocol::actuatorName(parts_.actuator->kind()),
      !parts_.config.fallbackEnabled ? "off by config"
      : parts_.foldingRefused        ? "refused on this platform"
      : parts_.autoFoldDeclined      ? "off (guest kernel class)"
                                     : "on",
      kernelClassName(parts_.kernelClass),
      parts_.autoFoldDeclined ? *parts_.autoFoldDeclined
                              : std::string("auto hints fold it (") + evidenceFor(parts_.kernelClass).figures +
                                    (parts_.config.foldDefault == FoldDefault::Always ? "; fold = always" : "") + ")");
  if (auto stat = readStat()) lastStat_ = *stat;
  if (auto online = parts_.fs.readFile(paths::kCpuOnline)) onlineText_ = *online;
  if (!parts_.foldingRefused && !parts_.autoFoldDeclined) {
    // Now, while the guest may be idle, rather than inside the first fold's answer.
    if (auto prepared = parts_.actuator->prepare(monotonicNow()); !prepared)
      log.warn("cannot prepare the {} actuator ({}); the first fold will try again",
               protocol::actuatorName(parts_.actuator->kind()), prepared.error().message);
    else if (prepared->changed)
      log.info("prepared the {} actuator: {}", protocol::actuatorName(parts_.actuator->kind()), prepared->detail);
  }

  // After the signals are blocked: the thread inherits the mask.
  actuatorThread_ = std::make_unique<ActuatorThread>(
      *parts_.actuator,
      [this](const CpuSet& fold, const Expected<ApplyResult>& done) { reportDeferredWork(fold, done); });

  // Pinged from this loop at half of WatchdogSec=, whatever interval_ms and
  // sample_ms are: the loop wakes for the ping when nothing else wakes it.
  std::uint64_t watchdogUsec = 0;
  const bool watchdog = sd_watchdog_enabled(0, &watchdogUsec) > 0;
  const auto pingEvery = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::microseconds(watchdogUsec / 2));
  MonotonicTime lastPing;
  sd_notify(0, "READY=1");
  MonotonicTime nextSample = monotonicNow();
  MonotonicTime nextInterval = nextSample + std::chrono::milliseconds(parts_.config.intervalMs);
  for (;;) {
    const MonotonicTime now = monotonicNow();
    MonotonicTime wakeAt = std::min(nextSample, nextInterval);
    if (watchdog) wakeAt = std::min(wakeAt, lastPing + pingEvery);
    std::vector<pollfd> fds = parts_.transport->pollFds(now, wakeAt);
    const std::size_t transportFds = fds.size();
    fds.push_back(pollfd{actuatorThread_->changeDoneFd(), POLLIN, 0});
    fds.push_back(pollfd{signalFd_, POLLIN, 0});
    // Rounded up: a wake-up before the deadline would only poll again.
    const auto untilWake = std::chrono::ceil<std::chrono::milliseconds>(wakeAt - now).count();
    const int timeout = static_cast<int>(std::clamp<std::int64_t>(untilWake, 0, 60'000));
    if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) {
      log.error("poll: {}", std::strerror(errno));
      break;
    }
    if (fds.back().revents & POLLIN) {
      signalfd_siginfo info{};
      if (::read(signalFd_, &info, sizeof info) == sizeof info) {
        if (info.ssi_signo == SIGHUP) {
          reload();
        } else {
          log.info("signal {}: unfolding and stopping", info.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
          break;
        }
      }
    }
    // The loop that proves liveness is the loop that does the work (at most
    // once a second: the loop wakes every sample).
    if (watchdog && monotonicNow() - lastPing >= std::min(pingEvery, std::chrono::milliseconds(1000))) {
      sd_notify(0, "WATCHDOG=1");
      lastPing = monotonicNow();
    }
    const MonotonicTime after = monotonicNow();
    // A change answered before the kernel had made it has ended (or, without
    // an eventfd, may have: the outcome is taken without waiting).
    if (changeInFlight_ && (fds[transportFds].fd < 0 || (fds[transportFds].revents & POLLIN))) onChangeEnded(after);
    std::vector<TransportEvent> events;
    parts_.transport->service(std::vector<pollfd>(fds.begin(), fds.begin() + static_cast<long>(transportFds)), after,
                              events);
    for (const auto& event : events) onTransportEvent(event, after);
    if (after >= nextSample) {
      onSample(after);
      nextSample = after + std::chrono::milliseconds(parts_.config.sampleMs);
    }
    if (after >= nextInterval) {
      onInterval(after);
      nextInterval = after + std::chrono::milliseconds(parts_.config.intervalMs);
    }
    // Measured once this wake's work is done, so that a guest that stops
    // running the agent during the work counts as well as one that does
    // not wake it (the work itself waits for the kernel kAnswerWithin at most).
    const MonotonicTime done = monotonicNow();
    if (const auto late = std::chrono::duration_cast<std::chrono::milliseconds>(done - std::max(wakeAt, now));
        late >= kLateLoopLogged)
      log.info("the agent's loop ran {} ms after it was due (at {:.3f} ms): the guest did not run it meanwhile",
               late.count(), monotonicMsOf(done));
  }

  sd_notify(0, "STOPPING=1");
  actuatorThread_->stop();  // a running step ends first: nothing folds after the unfold below
  actuatorThread_.reset();
  auto restored = parts_.actuator->restore();
  if (!restored) {
    log.error("unfold failed: {}", restored.error().message);
    return 1;
  }
  log.info("unfolded: all {} online CPUs preferred", parts_.topology.online.size());
  applied_ = parts_.topology.online;
  appliedControl_ = protocol::Control::None;
  writeMetricsTextfile(monotonicNow(), false);
  protocol::Status status{0.0, lastStealBp_, parts_.config.intervalMs, parts_.topology.online, protocol::Control::None};
  send(status);
  parts_.transport->flush(200);
  return 0;
}

void AgentDaemon::onTransportEvent(const TransportEvent& event, MonotonicTime now) {
  auto& log = *parts_.log;
  switch (event.kind) {
    case TransportEvent::Kind::Note:
      log.info("{}", event.text);
      break;
    case TransportEvent::Kind::Connected:
      log.info("{}: saying hello", event.text);
      session_.setOwnHello(ownHello());
      handle(session_.open(now), now);
      break;
    case TransportEvent::Kind::Disconnected:
      log.info("host gone ({}); lease runs out on its own", event.text);
      session_.close();
      break;
    case TransportEvent::Kind::Data:
      handle(session_.feed(event.text, now), now);
      break;
  }
}

void AgentDaemon::handle(const protocol::SessionOutput& out, MonotonicTime now) {
  auto& log = *parts_.log;
  for (const auto& frame : out.frames)
    if (!parts_.transport->send(frame.bytes)) log.debug("a frame was not sent: host not connected");
  using Kind = protocol::SessionEvent::Kind;
  for (const auto& event : out.events) {
    switch (event.kind) {
      case Kind::PeerHello:
        log.info("host {} says hello; protocol version {}", event.text, session_.version());
        break;
      case Kind::VersionMismatch:
        log.warn("host {} speaks no protocol version of ours", event.text);
        break;
      case Kind::Hint:
        onHint(std::get<protocol::Hint>(*event.message), now);
        break;
      case Kind::PeerError: {
        const auto& error = std::get<protocol::ErrorMessage>(*event.message);
        log.warn("host reports an error{}: {}", error.seq ? " about seq " + std::to_string(*error.seq) : "",
                 error.reason);
        break;
      }
      case Kind::ProtocolError:
        log.warn("refused a frame from the host: {}", event.text);
        break;
      case Kind::RepliesSuppressed:
        log.warn("{} error replies suppressed (rate limit)", event.count);
        break;
      case Kind::EncodeFailed:
        log.error("{}", event.text);
        break;
      default:
        break;  // host-side events
    }
  }
}

void AgentDaemon::onHint(const protocol::Hint& hint, MonotonicTime now) {
  const MonotonicTime received = monotonicNow();
  lastHintSeq_ = hint.seq;
  lastHintAt_ = now;
  if (parts_.foldingRefused) {
    // Acknowledged, so the host knows the agent is alive, but nothing folds:
    // all online CPUs, actuator none.
    if (!std::exchange(refusalLogged_, true))
      parts_.log->warn("hints are acknowledged but not applied: {}", *parts_.foldingRefused);
    apply(FoldDecision{parts_.topology.online, protocol::Control::None, *parts_.foldingRefused}, now, hint.seq,
          protocol::Actuator::None);
    return;
  }
  if (parts_.autoFoldDeclined && hint.policy == protocol::HintPolicy::Auto) {
    // Not applied, but acknowledged at once with all online CPUs and
    // actuator none; hello told the host why, so it counts the VM unfolded.
    if (!std::exchange(declineLogged_, true))
      parts_.log->info("hints of policy auto are acknowledged with all CPUs, not applied: {}",
                       *parts_.autoFoldDeclined);
    // As a hint of every CPU: its lease replaces any earlier (fixed) one,
    // which would otherwise fold again at the next interval.
    protocol::Hint everyCpu = hint;
    everyCpu.vcpus = static_cast<std::uint32_t>(parts_.topology.online.size());
    FoldDecision decision = controller_.onHint(everyCpu, now);
    decision.reason = "host hint seq " + std::to_string(hint.seq) + " (" + std::to_string(hint.vcpus) +
                      " vCPUs) not applied: guest kernel class " + kernelClassName(parts_.kernelClass);
    apply(decision, now, hint.seq, protocol::Actuator::None);
    return;
  }
  apply(controller_.onHint(hint, now), now, hint.seq);
  // Monotonic time, so a latency measurement can line this up with hostd's log.
  parts_.log->debug("hint seq {} ({} vCPUs) received at {:.3f} ms, {} in {:.3f} ms", hint.seq, hint.vcpus,
                    monotonicMsOf(received),
                    changeInFlight_ ? "answered with the CPUs in force (a change is being made)" : "applied",
                    std::chrono::duration<double, std::milli>(monotonicNow() - received).count());
}

void AgentDaemon::reportDeferredWork(const CpuSet& fold, const Expected<ApplyResult>& done) {
  if (!done)
    parts_.log->warn("finishing the fold onto {}: {}", protocol::formatCpuList(fold), done.error().message);
  else if (done->changed)
    parts_.log->info("finishing the fold onto {} via {}: {}", protocol::formatCpuList(fold),
                     protocol::actuatorName(parts_.actuator->kind()), done->detail);
}

void AgentDaemon::onSample(MonotonicTime now) {
  // What a fold left for after its answer, a slice per sample, off this loop.
  if (actuatorThread_) actuatorThread_->requestSlice();
  // /proc/loadavg, not /proc/stat: the same count of runnable tasks, for a
  // fraction of the kernel's work, many times a second (proc_loadavg.h).
  auto text = parts_.fs.readFile(paths::kProcLoadavg);
  if (!text) return;
  auto running = parseLoadavgRunning(*text);
  if (!running) return;
  // The reading agent is itself one of the running tasks.
  const double tasks = *running > 0 ? *running - 1 : 0;
  const auto early = demandWatch_.onSample(tasks, now);
  if (early && parts_.transport->connected()) {
    parts_.log->debug("demand {:.1f} tasks at {:.3f} ms: status sent now", *early,
                      monotonicMsOf(monotonicNow()));
    sendStatus(*early);
  }
}

void AgentDaemon::sendStatus(double demand) {
  send(protocol::Status{std::min(demand, 65536.0), lastStealBp_, parts_.config.intervalMs, applied_,
                        controller_.control()});
}

void AgentDaemon::reload() {
  auto& log = *parts_.log;
  if (!parts_.reloadConfig) {
    log.warn("SIGHUP: no configuration file to reload");
    return;
  }
  auto next = parts_.reloadConfig();
  if (!next) {
    log.error("SIGHUP: configuration refused, the running one stays: {}", next.error().message);
    return;
  }
  const auto plan = planAgentReload(parts_.config, *next);
  const AgentConfig& applied = plan.applied;
  const bool niceChanged = applied.nice != parts_.config.nice;
  parts_.config = applied;
  recheck_.forget();  // the next interval checks the fold in full under the new configuration
  log.set_level(spdlog::level::from_str(applied.logLevel));
  if (niceChanged) {
    // Each thread's nice is its own: this loop's here, the deferred work's on its thread.
    if (auto raised = setOwnNice(applied.nice); !raised)
      log.warn("SIGHUP: {} (agent.nice); the agent keeps nice {}", raised.error().message, ownNice());
    if (actuatorThread_) actuatorThread_->setNice(applied.nice);
  }
  const auto declined = autoFoldDeclined(parts_.kernelClass, applied.foldDefault);
  const bool declineChanged = declined.has_value() != parts_.autoFoldDeclined.has_value();
  parts_.autoFoldDeclined = declined;
  declineLogged_ = false;
  controller_.setConfig(controllerConfig());
  log.info(
      "SIGHUP: configuration reloaded: {}; in force: interval {} ms, sample {} ms, fallback {} (high {} bp, low {} bp), "
      "fold {}, nice {}{}{}",
      plan.appliedKeys.empty() ? "nothing it can change at run time changed" : "applied " + joinWords(plan.appliedKeys),
      applied.intervalMs, applied.sampleMs, applied.fallbackEnabled ? "on" : "off", applied.highThresholdBp,
      applied.lowThresholdBp, foldDefaultName(applied.foldDefault), ownNice(),
      declineChanged ? (declined ? "; auto hints no longer fold this guest from the next one"
                                 : "; auto hints fold this guest from the next one")
                     : "",
      plan.restartKeys.empty() ? "" : "; changed but kept as running until a restart: " + joinWords(plan.restartKeys));
  // The host learns at once whether auto hints fold this guest.
  if (declineChanged && parts_.transport->connected()) sendHello(monotonicNow());
}

void AgentDaemon::checkHotplug(MonotonicTime now) {
  auto online = parts_.fs.readFile(paths::kCpuOnline);
  if (!online || *online == onlineText_) return;
  const bool first = onlineText_.empty();
  onlineText_ = *online;
  if (first) return;
  auto topology = readTopology(parts_.fs);
  if (!topology) {
    parts_.log->warn("CPU hotplug: cannot re-read the topology: {}", topology.error().message);
    return;
  }
  parts_.log->info("CPU hotplug: online CPUs {} -> {}; re-placing", protocol::formatCpuList(parts_.topology.online),
                   protocol::formatCpuList(topology->online));
  parts_.topology = *topology;
  recheck_.forget();
  const auto leaseSeq = controller_.leaseSeq();
  // A mask naming an offline CPU would be refused: re-place on what is online.
  apply(controller_.onTopologyChange(PlacementPlan(parts_.topology)), now, std::nullopt);
  // The host learns the new online set (its ack checks use it).
  sendHello(now);
  if (leaseSeq) answerWithCpusInForce(*leaseSeq, parts_.actuator->kind());
}

void AgentDaemon::onInterval(MonotonicTime now) {
  checkHotplug(now);
  std::optional<std::uint32_t> stealBp;
  if (auto stat = readStat()) {
    if (lastStat_) stealBp = stealRatioBp(*lastStat_, *stat, ::sysconf(_SC_CLK_TCK));
    lastStat_ = *stat;
  }
  if (stealBp) lastStealBp_ = *stealBp;
  apply(controller_.onInterval(now, stealBp), now, std::nullopt);

  const double demand = demandWatch_.takePeriodic().value_or(0.0);
  lastDemand_ = demand;
  if (parts_.transport->connected()) sendStatus(demand);
  writeMetricsTextfile(now, true);
}

void AgentDaemon::writeMetricsTextfile(MonotonicTime now, bool running) {
  const std::string& path = parts_.config.metricsTextfile;
  if (path.empty()) return;
  AgentMetricsSnapshot snapshot;
  snapshot.running = running;
  snapshot.version = kAgentVersion;
  snapshot.actuator = parts_.actuator->kind();
  snapshot.kernelClass = kernelClassName(parts_.kernelClass);
  snapshot.foldsOnAutoHints = !parts_.foldingRefused && !parts_.autoFoldDeclined;
  snapshot.online = parts_.topology.online;
  snapshot.preferred = applied_;
  snapshot.control = appliedControl_;
  snapshot.hostConnected = running && parts_.transport->connected();
  snapshot.lastHintSeq = lastHintSeq_;
  if (lastHintSeq_) snapshot.lastHintAgeSeconds = std::chrono::duration<double>(now - lastHintAt_).count();
  snapshot.stealBp = lastStealBp_;
  snapshot.demandTasks = running ? lastDemand_ : 0.0;
  // Readable by node_exporter's user whatever the unit's UMask.
  auto written = parts_.fs.replaceFile(path, formatMetricsTextfile(snapshot), 0644);
  if (!written) {
    if (!std::exchange(textfileFailing_, true))
      parts_.log->warn("metrics textfile not written (folding is not affected): {}", written.error().message);
  } else if (std::exchange(textfileFailing_, false)) {
    parts_.log->info("metrics textfile {} written again", path);
  }
}

void AgentDaemon::apply(const FoldDecision& decision, MonotonicTime now, std::optional<std::uint64_t> ackSeq,
                        std::optional<protocol::Actuator> ackActuator) {
  auto& log = *parts_.log;
  const protocol::Actuator answerAs = ackActuator.value_or(parts_.actuator->kind());
  if (changeInFlight_) {
    // The kernel is still making the last change: nothing else starts before
    // it ends (the kernel would order the writes all the same). The answer is
    // what is in force; the change that ends owes this hint its own.
    ChangeInFlight owing{decision, ackSeq, answerAs, now};
    if (decision.cpus == changeInFlight_->decision.cpus && decision.control == changeInFlight_->decision.control) {
      changeNext_.reset();
      if (ackSeq) {
        changeInFlight_->owedAckSeq = ackSeq;
        changeInFlight_->owedAckActuator = answerAs;
      }
    } else {
      changeNext_ = owing;
    }
    if (ackSeq) answerWithCpusInForce(*ackSeq, answerAs);
    return;
  }
  const bool inPlace = decision.cpus == applied_ && decision.control == appliedControl_;
  if (inPlace && !recheck_.due(decision.cpus, decision.control, now,
                               std::chrono::milliseconds(kQuietPassesEvery * parts_.config.intervalMs))) {
    // In place at the last pass, which found nothing to put back (fold_recheck.h).
    if (ackSeq) send(protocol::Ack{*ackSeq, applied_, answerAs});
    return;
  }
  if (!actuatorThread_) {
    // Before the loop runs (or after it stopped): the actuator is this thread's.
    const bool unfolded = decision.cpus == parts_.topology.online;
    finishChange(decision, unfolded ? parts_.actuator->release(now) : parts_.actuator->apply(decision.cpus, now), now,
                 ackSeq, answerAs);
    return;
  }
  if (inPlace && actuatorThread_->busy()) {
    // The slice running now finishes this very fold: the answer (a lease
    // renewed, the interval's check) need not wait for the guest's kernel.
    log.debug("{} answered while the fold's deferred work runs",
              ackSeq ? "hint seq " + std::to_string(*ackSeq) : std::string("the interval's check"));
    if (ackSeq) send(protocol::Ack{*ackSeq, applied_, answerAs});
    return;
  }
  actuatorThread_->startChange(decision.cpus, decision.cpus == parts_.topology.online);
  auto ended = actuatorThread_->awaitChange(kAnswerWithin);
  if (ended) {
    finishChange(decision, *ended, now, ackSeq, answerAs);
    return;
  }
  changeInFlight_ = ChangeInFlight{decision, ackSeq, answerAs, now};
  log.info("the guest's kernel has not made the change to {} within {} ms; {}, the change goes on",
           protocol::formatCpuList(decision.cpus), kAnswerWithin.count(),
           ackSeq ? "hint seq " + std::to_string(*ackSeq) + " answered with the CPUs in force (" +
                        protocol::formatCpuList(applied_) + ", actuator none) and again once it is made"
                  : std::string("nothing to answer"));
  if (ackSeq) answerWithCpusInForce(*ackSeq, answerAs);
}

void AgentDaemon::onChangeEnded(MonotonicTime now) {
  auto ended = actuatorThread_->awaitChange(std::chrono::milliseconds(0));
  if (!ended) return;
  const ChangeInFlight change = *std::exchange(changeInFlight_, std::nullopt);
  parts_.log->info("the change to {} ended after {:.0f} ms", protocol::formatCpuList(change.decision.cpus),
                   std::chrono::duration<double, std::milli>(monotonicNow() - change.startedAt).count());
  finishChange(change.decision, *ended, now, change.owedAckSeq, change.owedAckActuator);
  if (auto next = std::exchange(changeNext_, std::nullopt))
    apply(next->decision, now, next->owedAckSeq, next->owedAckActuator);
}

void AgentDaemon::answerWithCpusInForce(std::uint64_t seq, protocol::Actuator ackActuator) {
  send(protocol::Ack{seq, applied_, changeInFlight_ ? protocol::Actuator::None : ackActuator});
}

void AgentDaemon::finishChange(const FoldDecision& decision, const Expected<ApplyResult>& result, MonotonicTime now,
                               std::optional<std::uint64_t> ackSeq, protocol::Actuator ackActuator) {
  auto& log = *parts_.log;
  if (!result) {
    recheck_.forget();
    log.warn("cannot apply {}: {}", protocol::formatCpuList(decision.cpus), result.error().message);
    if (ackSeq) sendError(ackSeq, "apply failed: " + result.error().message.substr(0, 200), now);
    return;
  }
  const bool changed = decision.cpus != applied_ || decision.control != appliedControl_;
  if (changed && decision.cpus == applied_) {
    log.info("control {} -> {} with preferred CPUs {} ({})", protocol::controlName(appliedControl_),
             protocol::controlName(decision.control), protocol::formatCpuList(applied_), decision.reason);
  } else if (changed) {
    log.info("preferred CPUs {} -> {} via {} ({}){}", protocol::formatCpuList(applied_),
             protocol::formatCpuList(decision.cpus), protocol::actuatorName(parts_.actuator->kind()), decision.reason,
             result->detail.empty() ? "" : ": " + result->detail);
  } else if (result->changed) {
    log.info("re-applied {} via {}: {}", protocol::formatCpuList(decision.cpus),
             protocol::actuatorName(parts_.actuator->kind()), result->detail);
  }
  applied_ = decision.cpus;
  appliedControl_ = decision.control;
  recheck_.applied(applied_, appliedControl_, now, !changed && !result->changed);
  if (!changed && !result->changed)
    log.debug("the fold onto {} is in place; the next full check in {} intervals unless it changes",
              protocol::formatCpuList(applied_), kQuietPassesEvery);
  session_.setOwnHello(ownHello());  // an answer to a host's hello says what is applied now
  if (ackSeq) send(protocol::Ack{*ackSeq, applied_, ackActuator});
}

protocol::Hello AgentDaemon::ownHello() const {
  protocol::AgentInfo info{parts_.topology.online,
                           parts_.topology.threadsPerCore,
                           parts_.topology.numaNodes,
                           parts_.availableActuators,
                           applied_,
                           std::string(kernelClassName(parts_.kernelClass)),
                           !parts_.foldingRefused && !parts_.autoFoldDeclined};
  return protocol::Hello{protocol::Role::Agent, supportedVersions(), std::string("vcpufold-agent ") + kAgentVersion,
                         info};
}

void AgentDaemon::sendHello(MonotonicTime now) {
  session_.setOwnHello(ownHello());
  handle(session_.sayHello(now), now);
}

void AgentDaemon::send(const protocol::Message& message) {
  if (!parts_.transport->connected()) {
    parts_.log->debug("{} not sent: host not connected", protocol::messageTypeName(message));
    return;
  }
  // Sending produces frames (and an encode failure's event), never a hint: the time is the loop's all the same.
  handle(session_.send(message), monotonicNow());
}

void AgentDaemon::sendError(std::optional<std::uint64_t> seq, const std::string& reason, MonotonicTime now) {
  handle(session_.sendError(seq, reason, now), now);
}

}  // namespace vcpufold::agent
