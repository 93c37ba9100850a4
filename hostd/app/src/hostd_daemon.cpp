// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/hostd_daemon.h"

#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdlib>
#include <deque>
#include <functional>
#include <optional>
#include <set>
#include <thread>

#include "vcpufold/common/daemon_support.h"
#include "vcpufold/common/log_text.h"
#include "vcpufold/common/number_text.h"
#include "vcpufold/common/system_paths.h"
#include "vcpufold/hostd/channel_peer.h"
#include "vcpufold/hostd/channel_session.h"
#include "vcpufold/hostd/config_reload.h"
#include "vcpufold/hostd/cpu_pool.h"
#include "vcpufold/hostd/decision_memory.h"
#include "vcpufold/hostd/inventory_worker.h"
#include "vcpufold/hostd/metrics.h"
#include "vcpufold/hostd/qemu_threads.h"
#include "vcpufold/hostd/status_json.h"
#include "vcpufold/hostd/status_table.h"
#include "vcpufold/hostd/text_servers.h"
#include "vcpufold/hostd/vcpu_time_report.h"
#include "vcpufold/hostd/version.h"

namespace vcpufold::hostd {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr auto kMetricsRetry = std::chrono::seconds(10);
constexpr auto kWorkerPatienceOnStop = std::chrono::seconds(3);
// A changed demand report is acted on this much later: the reports of other
// VMs that change in the same moment (one load moving between VMs) are then
// decided on together.
constexpr auto kEventDebounce = std::chrono::milliseconds(30);
// How long a VM's vCPUs are watched when its agent reports a rise the samples
// do not show yet: long enough that busy vCPU threads show as busy, short
// against the tick.
constexpr auto kEvidenceWindow = std::chrono::milliseconds(50);
constexpr auto kEvidenceWindowAgain = std::chrono::milliseconds(200);  // once, when the first fell short

double threadCpuSeconds() {
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

double msBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// What every decision takes from the configuration: the daemon's and --oneshot's.
DecisionSettings decisionSettingsOf(const HostdConfig& config) {
  const milliseconds interval(config.intervalMs);
  return DecisionSettings{AllocationConfig{milliseconds(config.unfoldDelayMs), config.unfoldMarginCpus},
                          interval * config.ttlTicks, milliseconds(config.missingInputHoldMs), config.reserveCpus,
                          config.rules};
}

// Wall-clock time for the metrics' timestamps (start, last reload), in whole seconds.
double unixSecondsNow() {
  return static_cast<double>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

}  // namespace

struct HostdDaemon::Impl {
  explicit Impl(HostdParts daemonParts)
      : parts(std::move(daemonParts)),
        tickTimer(io),
        decisionTimer(io),
        metricsRetryTimer(io),
        watchdogTimer(io),
        stopSignals(io, SIGINT, SIGTERM),
        reloadSignal(io, SIGHUP) {}

  HostdParts parts;
  asio::io_context io;
  asio::steady_timer tickTimer;
  asio::steady_timer decisionTimer;  // a decision between ticks: a demand report, an unfold falling due
  asio::steady_timer metricsRetryTimer;
  asio::steady_timer watchdogTimer;
  asio::signal_set stopSignals;
  asio::signal_set reloadSignal;
  std::unique_ptr<InventoryWorker> worker;
  std::map<std::string, std::unique_ptr<ChannelSession>> sessions;

  // The newest inventory snapshot; what the decisions remember of earlier ones.
  std::optional<HostSnapshot> snapshot;
  Clock::time_point startedAt = Clock::now();
  DaemonFacts facts;  // the metrics' build, start, tick and reload
  std::vector<VmRecord> records;
  DecisionMemory memory;
  std::optional<Clock::time_point> eventDecisionAt;
  std::string eventDecisionWhy;
  bool withdrawnLogged = false;
  std::string missingKind;  // what is missing, digits removed: a change is worth a line
  bool snapshotLate = false;

  std::map<std::string, std::optional<std::uint32_t>> loggedHints;
  std::map<std::string, std::string> loggedPolicyErrors;
  std::set<std::string> refusedSockets;
  // Each VM's latest vCPU samples, oldest first, for an overdue answer's log
  // line (vcpu_time_report.h).
  std::map<std::string, std::deque<VmSample>> recentSamples;
  std::string lastInventoryError;
  TickDurationHistogram tickDuration;
  DaemonCounters counters;
  std::uint64_t decisions = 0;
  std::unique_ptr<MetricsServer> metrics;
  std::unique_ptr<ControlServer> control;
  std::chrono::steady_clock::time_point nextTick;
  std::chrono::steady_clock::time_point scheduledTick;  // when the tick in progress was due
  std::chrono::microseconds watchdogPeriod{0};  // half of WATCHDOG_USEC; 0: no watchdog
  std::string socketOwnerName;  // see socketOwner()
  std::optional<uid_t> socketOwnerUid;

  spdlog::logger& log() { return *parts.log; }
  const HostdConfig& config() const { return parts.config; }
  milliseconds interval() const { return milliseconds(config().intervalMs); }
  AllocationConfig allocationConfig() const { return settings().allocation; }
  milliseconds lease() const { return settings().lease; }
  DecisionSettings settings() const { return decisionSettingsOf(config()); }
  ChannelSnapshots channelStates() const {
    ChannelSnapshots channels;
    for (const auto& [name, session] : sessions) channels[name] = session->snapshot();
    return channels;
  }
  // No snapshot, or one too old to be evidence of now.
  bool stale(Clock::time_point now) const { return !snapshot || snapshotIsStale(snapshot->takenAt, now, interval()); }

  ChannelLimits limits() const {
    ChannelLimits l;
    l.session.ackTimeout = lease();
    // A hint QEMU had not taken off the socket by then gets one lease more.
    l.session.deliveryGrace = lease();
    return l;
  }

  // Who may serve a VM's hint socket, asked at every connect: with libvirt
  // the domain's own QEMU (its XML may name any path); in the QMP directory
  // a socket file of a trusted owner, looked at again (it may have been
  // replaced since the inventory saw it). [[vm]] tables are the operator's.
  ChannelSession::PeerCheck peerCheckFor(const VmRecord& vm) {
    if (config().inventory == InventoryKind::Libvirt)
      return [fs = parts.fs, name = vm.name](int fd) { return refusedLibvirtPeer(fs, name, fd); };
    if (vm.policySource == PolicySource::Config) return {};
    return [path = *vm.channelSocket, owner = socketOwner()](int) { return refusedSocketFile(path, owner); };
  }

  // The run-queue wait of the VM's QEMU main loop, which takes hints off the
  // channel: with libvirt the domain's QEMU (the socket's peer may be libvirt
  // itself), else the socket's peer, which is QEMU.
  ChannelSession::PeerWaitProbe peerWaitProbeFor(const VmRecord& vm) {
    const bool libvirt = config().inventory == InventoryKind::Libvirt;
    return [fs = parts.fs, name = vm.name, libvirt](int fd) -> std::optional<std::chrono::nanoseconds> {
      const auto pid = libvirt ? readLibvirtQemuPid(fs, name) : peerPidOf(fd);
      if (!pid) return std::nullopt;
      const auto waited = readMainThreadRunQueueWaitNs(fs, *pid);
      if (!waited) return std::nullopt;
      return std::chrono::nanoseconds(static_cast<std::chrono::nanoseconds::rep>(*waited));
    };
  }

  // inventory.qmp_socket_owner as a uid, looked up once per name: the user
  // database may be a network service, not something to wait for on the
  // control thread at every new session.
  std::optional<uid_t> socketOwner() {
    const std::string& name = config().qmpSocketOwner;
    if (socketOwnerName != name) {
      socketOwnerName = name;
      socketOwnerUid = name.empty() ? std::nullopt : uidOfUser(name);
    }
    return socketOwnerUid;
  }

  void reconcileSessions() {
    std::set<std::string> wanted;
    for (const auto& vm : records) {
      if (!vm.channelSocket) continue;
      if (vm.channelSocket->size() > paths::kMaxSocketPath) {
        if (refusedSockets.insert(vm.name).second)
          log().warn("{}: channel socket path is {} bytes, over the {} a UNIX socket allows; not connecting",
                     escapeForLog(vm.name, 128), vm.channelSocket->size(), paths::kMaxSocketPath);
        continue;
      }
      wanted.insert(vm.name);
      auto& session = sessions[vm.name];
      if (session && session->socketPath() == *vm.channelSocket) continue;
      session = std::make_unique<ChannelSession>(io, vm.name, *vm.channelSocket, limits(),
                                                 [this](const std::string& line) { log().info("{}", line); });
      session->onStatus([this, name = vm.name](const protocol::Status& status) { onStatus(name, status); });
      session->onCooperation([this, name = vm.name] { onCooperation(name); });
      session->checkPeer(peerCheckFor(vm));
      session->measurePeerWait(peerWaitProbeFor(vm));
      session->reportWaitWith([this, name = vm.name](Clock::time_point since) -> std::optional<std::string> {
        const auto recent = recentSamples.find(name);
        if (recent == recentSamples.end()) return std::nullopt;
        return describeVcpuTimeSince(recent->second, std::chrono::nanoseconds(since.time_since_epoch()).count());
      });
      session->start();
    }
    for (auto it = sessions.begin(); it != sessions.end();) {
      if (wanted.count(it->first)) {
        ++it;
        continue;
      }
      log().info("{}: gone; channel closed", escapeForLog(it->first, 128));
      it = sessions.erase(it);
    }
    // Forget what was logged about VMs that are gone: a VM of the same name
    // later is new, and the maps must not grow with every VM ever seen.
    std::set<std::string> present;
    for (const auto& vm : records) present.insert(vm.name);
    std::erase_if(loggedHints, [&present](const auto& entry) { return !present.count(entry.first); });
    std::erase_if(loggedPolicyErrors, [&present](const auto& entry) { return !present.count(entry.first); });
    std::erase_if(refusedSockets, [&present](const std::string& name) { return !present.count(name); });
    std::erase_if(recentSamples, [&present](const auto& entry) { return !present.count(entry.first); });
  }

  // A snapshot arrived from the worker: take in the VMs, then decide.
  void onSnapshot(HostSnapshot fresh) {
    for (const auto& note : fresh.notes) log().info("{}", escapeForLog(note));
    if (fresh.inventoryRead) {
      records = fresh.records;
      if (!lastInventoryError.empty()) log().info("inventory: {} answers again", worker->describe());
      lastInventoryError.clear();
    } else {
      const std::string error = fresh.missing.empty() ? "inventory failed" : fresh.missing.front();
      if (error != lastInventoryError) log().warn("{} (keeping the last known VMs)", escapeForLog(error));
      lastInventoryError = error;
    }
    for (const auto& vm : records) {
      const std::string error = vm.policyError.value_or("");
      if (loggedPolicyErrors[vm.name] != error && !error.empty())
        log().warn("{}: policy metadata refused: {}; keeping mode {}", escapeForLog(vm.name, 128), escapeForLog(error),
                   foldModeName(vm.policy.mode));
      loggedPolicyErrors[vm.name] = error;
    }
    for (const auto& [name, sample] : fresh.samples) {
      auto& recent = recentSamples[name];
      recent.push_back(sample);
      if (recent.size() > kRecentVcpuSamples) recent.pop_front();
    }
    if (snapshotLate) log().info("inventory snapshots arrive again");
    snapshotLate = false;
    const bool worthDeciding = memory.worthDeciding(fresh.takenAt, interval());
    snapshot = std::move(fresh);
    reconcileSessions();
    if (worthDeciding) decide(Clock::now());
  }

  // One decision from the newest snapshot (stale or not) and the channels.
  void decide(Clock::time_point now) {
    const double cpuStart = threadCpuSeconds();
    ++decisions;
    std::optional<std::string> staleWhy;
    if (stale(now)) {
      const auto activity = worker->activity();
      staleWhy = "no inventory snapshot for " +
                 std::to_string(static_cast<long long>(msBetween(snapshot ? snapshot->takenAt : startedAt, now))) +
                 " ms (the inventory thread is in " + activity.step + " for " +
                 std::to_string(static_cast<long long>(msBetween(activity.since, now))) + " ms)";
    }
    const auto missingSince = memory.inputsMissingSince();
    memory.decideOnSnapshot(settings(), records, snapshot ? &*snapshot : nullptr, staleWhy, channelStates(), now,
                            decisions);
    noteInputs(now, missingSince);
    applyHints();
    armUnfoldDue();
    tickDuration.observe(threadCpuSeconds() - cpuStart);
    log().debug("decision {} at {:.3f} ms: snapshot {} ({:.3f} ms old), decide and queue {:.3f} ms", decisions,
                std::chrono::duration<double, std::milli>(now.time_since_epoch()).count(),
                snapshot ? snapshot->cycle : 0, snapshot ? msBetween(snapshot->takenAt, now) : -1.0,
                msBetween(now, Clock::now()));
  }

  // An agent's status: a demand that moved by a task or more from what the
  // last decision used calls for a decision now, not at the next tick.
  void onStatus(const std::string& vm, const protocol::Status& status) {
    const auto session = sessions.find(vm);
    const bool cooperative = session != sessions.end() && session->second->snapshot().cooperative;
    auto why = memory.demandMoved(vm, status.demand, cooperative);
    if (!why) return;
    // A guest whose demand swings on purpose forces a decision for the whole
    // host each time: each VM may call for kEventsPerVm in kEventWindow, and
    // beyond that its reports wait for the tick (they still count there).
    // (kEventDecisionsPerVm in kEventDecisionWindow, decision_memory.h)
    if (!memory.allowEventDecisionFor(vm, Clock::now())) {
      ++counters.eventDecisionsRefusedTotal;
      return;
    }
    // A rise above what the last samples showed counts only on the host's
    // evidence (allocation.h): the VM's vCPUs are measured over a short
    // window now, and the decision taken again once that is known, so an
    // honest guest waking is acted on within a fraction of the tick.
    if (worker && memory.claimNeedsEvidence(vm, status.demand)) measure(vm, status.demand, kEvidenceWindow);
    requestDecision(Clock::now() + kEventDebounce, *why);
  }

  // Measures a VM's vCPUs over `window` on the inventory thread, for a
  // report of `claimed` tasks.
  void measure(const std::string& vm, double claimed, std::chrono::milliseconds window) {
    worker->measureNow(vm, window, [this, claimed, window](const std::string& measured, std::optional<VmLoad> load) {
      asio::post(io, [this, measured, claimed, window, load] { onRecentLoad(measured, claimed, window, load); });
    });
  }

  // The short measurement a rising report asked for: evidence for the next
  // decision (a VM that could not be sampled gives none). A guest's tasks
  // take a moment to spread over its vCPUs (in a slow guest, longer than the
  // first window): a measure short of the claim is taken once more, longer.
  void onRecentLoad(const std::string& vm, double claimed, std::chrono::milliseconds window,
                    const std::optional<VmLoad>& load) {
    if (!load) return;
    memory.noteRecentDemand(vm, load->demandCpus, Clock::now());
    requestDecision(Clock::now(), escapeForLog(vm, 128) + "'s vCPUs measured: demand " +
                                      fixedDecimals(load->demandCpus, 2) + " over " + std::to_string(window.count()) +
                                      " ms");
    if (window == kEvidenceWindow && memory.claimNeedsEvidence(vm, claimed, load->demandCpus))
      measure(vm, claimed, kEvidenceWindowAgain);
  }

  // An agent that starts acknowledging has so far been hinted all its vCPUs
  // (its word did not count): its share applies from now, not from the next
  // tick. After a restart of hostd every VM goes through this.
  void onCooperation(const std::string& vm) {
    if (!memory.canRevise()) return;
    requestDecision(Clock::now() + kEventDebounce, escapeForLog(vm, 128) + " acknowledges hints");
  }

  // A decision at `at` (the earliest asked for wins; a later one is folded into it).
  void requestDecision(Clock::time_point at, std::string why) {
    if (eventDecisionAt && *eventDecisionAt <= at) return;
    eventDecisionAt = at;
    eventDecisionWhy = std::move(why);
    decisionTimer.expires_at(at);
    decisionTimer.async_wait([this](const boost::system::error_code& error) {
      if (error) return;
      eventDecisionAt.reset();
      decideOnEvent(Clock::now(), std::exchange(eventDecisionWhy, {}));
    });
  }

  void armUnfoldDue() {
    if (const auto due = memory.nextUnfoldDue(allocationConfig())) requestDecision(*due, "an unfold falls due");
  }

  // A decision between ticks: the last complete decision's samples, pool and
  // capacity, with the channels as they are now.
  void decideOnEvent(Clock::time_point now, const std::string& why) {
    if (!memory.canRevise()) return;  // a tick since found inputs missing: its hold stands
    // Samples older than a tick decision would accept are not evidence either:
    // the next tick holds, and nothing is decided on them meanwhile.
    if (stale(now)) return;
    const double cpuStart = threadCpuSeconds();
    ++decisions;
    ++counters.eventDecisionsTotal;
    memory.decideOnEvent(settings(), channelStates(), now, decisions);
    applyHints();
    armUnfoldDue();
    log().debug("decision {} at {:.3f} ms: {}; snapshot {} ({:.3f} ms old), decide and queue {:.3f} ms ({:.3f} ms CPU)",
                decisions, std::chrono::duration<double, std::milli>(now.time_since_epoch()).count(), why,
                snapshot ? snapshot->cycle : 0, snapshot ? msBetween(snapshot->takenAt, now) : -1.0,
                msBetween(now, Clock::now()), (threadCpuSeconds() - cpuStart) * 1000);
  }

  // Logs a missing-input episode once when it starts, once when hints are
  // withdrawn and once when it ends; counts every decision it touches.
  // missingSince: the episode's start before this decision (none: inputs were complete).
  void noteInputs(Clock::time_point now, std::optional<Clock::time_point> missingSince) {
    const TickReport& latest = memory.latest();
    if (latest.inputsMissing) {
      ++counters.inputsMissingTotal;
      const bool poolWithdrawn = std::any_of(latest.pools.begin(), latest.pools.end(),
                                             [](const PoolReport& pool) { return pool.hintsWithdrawn; });
      if (latest.hintsWithdrawn || poolWithdrawn) ++counters.hintsWithdrawnTotal;
      // Said when an episode starts and when what is missing changes (numbers
      // aside), not every tick.
      std::string kind = *latest.inputsMissing;
      std::erase_if(kind, [](char c) { return c >= '0' && c <= '9'; });
      const char* held = latest.inputsMissingHostWide ? "every hint" : "the hints of that VM's CPU pool";
      if (!missingSince) {
        log().warn("inputs missing: {}; holding {} for up to {} ms, never folding further",
                   escapeForLog(*latest.inputsMissing), held, config().missingInputHoldMs);
      } else if (kind != missingKind) {
        log().warn("inputs missing: {}; holding {} since {:.0f} ms", escapeForLog(*latest.inputsMissing), held,
                   msBetween(*missingSince, now));
      }
      missingKind = kind;
      if ((latest.hintsWithdrawn || poolWithdrawn) && !withdrawnLogged) {
        withdrawnLogged = true;
        log().warn("inputs missing for over {} ms ({}): {} stopped; leases lapse and guests unfold or fall back",
                   config().missingInputHoldMs, escapeForLog(*latest.inputsMissing),
                   latest.hintsWithdrawn ? "hints" : "that pool's hints");
      }
      return;
    }
    if (missingSince)
      log().info("inputs complete again after {:.0f} ms; deciding normally", msBetween(*missingSince, now));
    withdrawnLogged = false;
    missingKind.clear();
  }

  void applyHints() {
    for (const auto& vm : memory.latest().vms) {
      const auto session = sessions.find(vm.record.name);
      if (session == sessions.end()) continue;
      session->second->setHint(vm.hint);
      auto& logged = loggedHints[vm.record.name];
      if (logged != vm.allocation.hint) {
        log().info(
            "{}: hint {} -> {}: {}", escapeForLog(vm.record.name, 128), logged ? std::to_string(*logged) : "none",
            vm.allocation.hint ? std::to_string(*vm.allocation.hint) : "none", escapeForLog(vm.allocation.reason));
        logged = vm.allocation.hint;
      }
    }
  }

  // The control thread's beat: lease renewal on every channel, and a decision
  // on missing inputs when the worker has not delivered in time.
  void tick() {
    const auto now = Clock::now();
    // At start, the first snapshot is given as long as a late one would be.
    const bool warmingUp = !snapshot && !snapshotIsStale(startedAt, now, interval());
    if (stale(now) && !warmingUp) {
      ++counters.snapshotsLateTotal;
      if (!snapshotLate) {
        const auto activity = worker->activity();
        log().warn("inventory snapshot late: the inventory thread is in {} for {:.0f} ms", activity.step,
                   msBetween(activity.since, now));
      }
      snapshotLate = true;
      decide(now);
    }
    counters.snapshotAgeSeconds = snapshot ? msBetween(snapshot->takenAt, now) / 1000.0 : 0.0;
    const auto late = std::chrono::duration_cast<std::chrono::milliseconds>(now - scheduledTick);
    for (auto& [name, session] : sessions) session->tick(std::max(late, std::chrono::milliseconds(0)));
  }

  // The loop that proves liveness is the loop that does the work: the pings
  // run on the control thread with the ticks, sessions and decisions, so a
  // wedged control thread misses them and systemd restarts the daemon. They
  // keep their own time (half of WatchdogSec=), so a tick longer than the
  // watchdog's period is no fault.
  void schedulePing() {
    if (watchdogPeriod.count() == 0) return;
    sd_notify(0, "WATCHDOG=1");
    watchdogTimer.expires_after(watchdogPeriod);
    watchdogTimer.async_wait([this](const boost::system::error_code& error) {
      if (!error) schedulePing();
    });
  }

  void scheduleTick() {
    nextTick += interval();
    // After a stall (suspend, a debugger) start afresh instead of ticking in a burst.
    if (nextTick < Clock::now()) nextTick = Clock::now();
    scheduledTick = nextTick;
    tickTimer.expires_at(nextTick);
    tickTimer.async_wait([this](const boost::system::error_code& error) {
      if (error) return;
      tick();
      scheduleTick();
    });
  }

  // A page is rendered at most once per decision and served from the cache
  // in between: a local user scraping in a loop costs hostd a copy per
  // request, not a render (whose CPU hostd would measure as non-VM load and
  // fold VMs for).
  struct CachedPage {
    std::string text;
    std::optional<std::uint64_t> decision;  // the decision it shows
  };
  CachedPage metricsPage;
  CachedPage statusPage;
  CachedPage statusJsonPage;

  const std::string& cached(CachedPage& page, const std::function<std::string()>& render) {
    if (page.decision != decisions) {
      ++counters.textPagesRendered;
      page.text = render();
      page.decision = decisions;
    }
    return page.text;
  }

  std::string renderMetricsPage() {
    return cached(metricsPage, [this] {
      if (metrics) {
        counters.metricsConnectionsEvicted = metrics->evictedConnections();
        counters.metricsAcceptErrors = metrics->acceptErrors();
      }
      counters.metricsListening = metrics != nullptr;
      facts.tickIntervalSeconds = config().intervalMs / 1000.0;
      return renderMetrics(memory.latest(), tickDuration, counters, facts);
    });
  }

  std::string renderStatusPage() {
    return cached(statusPage, [this] { return renderStatusTable(memory.latest(), true); });
  }

  std::string renderStatusJsonPage() {
    return cached(statusJsonPage, [this] { return renderStatusJson(memory.latest()); });
  }

  // A busy port must not keep hints from flowing: the daemon runs on and
  // tries again later.
  void startMetrics() {
    if (config().metricsAddress.empty()) return;
    auto started = MetricsServer::start(io, config().metricsAddress, [this] { return renderMetricsPage(); });
    if (!started) {
      log().warn("{}; hints go on, retrying in {} s", started.error().message, kMetricsRetry.count());
      metricsRetryTimer.expires_after(kMetricsRetry);
      metricsRetryTimer.async_wait([this](const boost::system::error_code& error) {
        if (!error) startMetrics();
      });
      return;
    }
    metrics = std::move(*started);
    log().info("metrics on http://{}/metrics", config().metricsAddress);
  }

  void waitForReload() {
    reloadSignal.async_wait([this](const boost::system::error_code& error, int) {
      if (error) return;
      reload();
      waitForReload();
    });
  }

  // SIGHUP: the tick, lease, hysteresis, reserve, hold and log level change
  // in place; what needs new connections is reported as needing a restart.
  void reload() {
    if (!parts.reloadConfig) {
      log().warn("SIGHUP: no configuration file to reload");
      return;
    }
    auto next = parts.reloadConfig();
    if (!next) {
      log().error("SIGHUP: configuration refused, the running one stays: {}", next.error().message);
      facts.lastReloadSuccessful = false;
      return;
    }
    facts.lastReloadSuccessful = true;
    facts.lastReloadSuccessTimeSeconds = unixSecondsNow();
    const auto plan = planHostdReload(config(), *next);
    parts.config = plan.applied;
    parts.log->set_level(spdlog::level::from_str(plan.applied.logLevel));
    worker->setPeriod(interval());
    const HostdConfig& applied = plan.applied;
    log().info(
        "SIGHUP: configuration reloaded: {}; in force: tick {} ms, lease {} ticks, unfold after {} ms, reserve {} CPUs, "
        "hold on missing inputs {} ms, {} fleet rules{}",
        plan.appliedKeys.empty() ? "nothing it can change at run time changed" : "applied " + joinWords(plan.appliedKeys),
        applied.intervalMs, applied.ttlTicks, applied.unfoldDelayMs, applied.reserveCpus, applied.missingInputHoldMs,
        applied.rules.size(),
        plan.restartKeys.empty() ? ""
                                 : "; changed but kept as running until a restart: " + joinWords(plan.restartKeys));
  }
};

HostdDaemon::HostdDaemon(HostdParts parts) : impl_(std::make_unique<Impl>(std::move(parts))) {}
HostdDaemon::~HostdDaemon() = default;

int HostdDaemon::run() {
  auto& impl = *impl_;
  auto& config = impl.parts.config;
  impl.log().info(
      "vcpufold-hostd {} starting: {}, tick {} ms, lease {} ticks, unfold after {} ms, reserve {} CPUs, "
      "hold on missing inputs {} ms",
      kHostdVersion, impl.parts.inventory->describe(), config.intervalMs, config.ttlTicks, config.unfoldDelayMs,
      config.reserveCpus, config.missingInputHoldMs);
  impl.startMetrics();
  if (!config.controlSocket.empty()) {
    const auto directory = impl.parts.fs.resolve(config.controlSocket).parent_path();
    std::error_code ignored;
    std::filesystem::create_directories(directory, ignored);
    auto control = ControlServer::start(impl.io, impl.parts.fs.resolve(config.controlSocket).string(),
                                        ControlSources{[&impl] { return impl.renderStatusPage(); },
                                                       [&impl] { return impl.renderStatusJsonPage(); }});
    if (!control) {
      impl.log().error("{}", control.error().message);
      return 1;
    }
    impl.control = std::move(*control);
  }
  impl.stopSignals.async_wait([&impl](const boost::system::error_code& error, int signo) {
    if (error) return;
    impl.log().info("{}: stopping; hints stop and the guests' leases run out", signo == SIGTERM ? "SIGTERM" : "SIGINT");
    impl.io.stop();
  });
  impl.waitForReload();

  // Everything that can block runs on the worker; its snapshots come back here.
  impl.worker = std::make_unique<InventoryWorker>(
      std::move(impl.parts.inventory), impl.parts.fs, config.poolCgroup, impl.interval(),
      [&impl](HostSnapshot snapshot) {
        asio::post(impl.io,
                   [&impl, snapshot = std::move(snapshot)]() mutable { impl.onSnapshot(std::move(snapshot)); });
      });
  impl.worker->start();
  impl.startedAt = Clock::now();
  impl.facts.version = kHostdVersion;
  impl.facts.startTimeSeconds = unixSecondsNow();
  impl.facts.lastReloadSuccessTimeSeconds = impl.facts.startTimeSeconds;
  impl.nextTick = impl.startedAt;
  impl.scheduleTick();
  std::uint64_t watchdogUsec = 0;
  if (sd_watchdog_enabled(0, &watchdogUsec) > 0) impl.watchdogPeriod = std::chrono::microseconds(watchdogUsec / 2);
  sd_notify(0, "READY=1\nSTATUS=ticking");
  impl.schedulePing();
  impl.io.run();
  sd_notify(0, "STOPPING=1");
  impl.sessions.clear();
  if (!impl.worker->stop(kWorkerPatienceOnStop)) {
    // A libvirt or QMP call that never returns must not keep the daemon from
    // stopping: the hints have stopped already, so leave without it.
    impl.log().warn("the inventory thread is still in {}; exiting without it", impl.worker->activity().step);
    impl.log().flush();
    std::_Exit(0);
  }
  return 0;
}

Expected<TickReport> HostdDaemon::observeOnce(HostdParts& parts) {
  const HostSnapshot before = InventoryWorker::readOnce(*parts.inventory, parts.fs, parts.config.poolCgroup, 1);
  if (!before.inventoryRead) return Error{before.missing.empty() ? "inventory failed" : before.missing.front()};
  std::this_thread::sleep_for(std::chrono::milliseconds(parts.config.intervalMs));
  const HostSnapshot after = InventoryWorker::readOnce(*parts.inventory, parts.fs, parts.config.poolCgroup, 2);
  if (!after.inventoryRead) return Error{after.missing.empty() ? "inventory failed" : after.missing.front()};
  // As if every VM with a channel had a cooperative agent: what hostd would hint.
  ChannelSnapshots channels;
  for (const auto& vm : after.records) {
    ChannelSnapshot assumed;
    assumed.cooperative = vm.channelSocket.has_value();
    channels[vm.name] = assumed;
  }
  // The daemon's own decision path, so that --oneshot cannot drift from it.
  DecisionMemory memory;
  memory.startWindowAt(before);
  return memory.decideOnSnapshot(decisionSettingsOf(parts.config), after.records, &after, std::nullopt,
                                 std::move(channels), after.takenAt, 1);
}

}  // namespace vcpufold::hostd
