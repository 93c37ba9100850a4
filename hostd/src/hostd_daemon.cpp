#include "vcpufold/hostd/hostd_daemon.h"

#include <spdlog/spdlog.h>
#include <time.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <thread>

#include "vcpufold/common/system_paths.h"
#include "vcpufold/hostd/channel_session.h"
#include "vcpufold/hostd/cpu_pool.h"
#include "vcpufold/hostd/metrics.h"
#include "vcpufold/hostd/status_table.h"
#include "vcpufold/hostd/text_servers.h"

namespace vcpufold::hostd {
namespace {

namespace asio = boost::asio;

double threadCpuSeconds() {
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

protocol::HintPolicy hintPolicyOf(FoldMode mode) {
  if (mode == FoldMode::Off) return protocol::HintPolicy::Off;
  if (mode == FoldMode::Fixed) return protocol::HintPolicy::Fixed;
  return protocol::HintPolicy::Auto;
}

bool hostIsCgroupV2(const RootedFs& fs) { return fs.exists(std::string(paths::kCgroupRoot) + "/cgroup.controllers"); }

// The pool and this tick's busy time on it; busy is unknown on the first reading.
struct HostReading {
  VmCpuPool pool;
  std::optional<std::map<unsigned, CpuTicks>> ticks;
};

Expected<HostReading> readHost(const RootedFs& fs) {
  auto pool = readVmCpuPool(fs);
  if (!pool) return pool.error();
  HostReading reading{*pool, std::nullopt};
  if (auto stat = fs.readFile(paths::kProcStat))
    if (auto ticks = parsePerCpuTicks(*stat)) reading.ticks = *ticks;
  return reading;
}

}  // namespace

struct HostdDaemon::Impl {
  explicit Impl(HostdParts daemonParts) : parts(std::move(daemonParts)), tickTimer(io), signals(io, SIGINT, SIGTERM) {}

  HostdParts parts;
  asio::io_context io;
  asio::steady_timer tickTimer;
  asio::signal_set signals;
  std::map<std::string, std::unique_ptr<ChannelSession>> sessions;
  std::map<std::string, HintState> hintState;
  std::map<std::string, VmSample> previousSamples;
  std::optional<std::map<unsigned, CpuTicks>> previousTicks;
  std::optional<double> previousNonVmCpus;
  std::vector<VmRecord> records;
  std::map<std::string, std::optional<std::uint32_t>> loggedHints;
  std::map<std::string, bool> loggedCooperation;
  std::map<std::string, std::string> loggedPolicyErrors;
  std::string lastInventoryError;
  TickReport latest;
  TickDurationHistogram tickDuration;
  std::uint64_t ticks = 0;
  std::unique_ptr<MetricsServer> metrics;
  std::unique_ptr<ControlServer> control;
  std::chrono::steady_clock::time_point nextTick;

  spdlog::logger& log() { return *parts.log; }

  ChannelLimits limits() const {
    ChannelLimits l;
    l.ackTimeout = std::chrono::milliseconds(parts.config.intervalMs * parts.config.ttlTicks);
    return l;
  }

  void reconcileSessions() {
    std::map<std::string, bool> wanted;
    for (const auto& vm : records) {
      if (!vm.channelSocket) continue;
      wanted[vm.name] = true;
      auto& session = sessions[vm.name];
      if (session && session->socketPath() == *vm.channelSocket) continue;
      session = std::make_unique<ChannelSession>(io, vm.name, *vm.channelSocket, limits(),
                                                 [this](const std::string& line) { log().info("{}", line); });
      session->start();
    }
    for (auto it = sessions.begin(); it != sessions.end();) {
      if (wanted.count(it->first)) {
        ++it;
        continue;
      }
      log().info("{}: gone; channel closed", it->first);
      it = sessions.erase(it);
    }
  }

  void tick() {
    const double cpuStart = threadCpuSeconds();
    const auto started = std::chrono::steady_clock::now();
    ++ticks;
    if (auto refreshed = parts.inventory->refresh()) {
      records = std::move(*refreshed);
      if (!lastInventoryError.empty()) log().info("inventory: {} answers again", parts.inventory->describe());
      lastInventoryError.clear();
    } else if (refreshed.error().message != lastInventoryError) {
      lastInventoryError = refreshed.error().message;
      log().warn("inventory: {} (keeping the last known VMs)", lastInventoryError);
    }
    for (const auto& note : parts.inventory->takeNotes()) log().info("{}", note);
    for (const auto& vm : records) {
      const std::string error = vm.policyError.value_or("");
      if (loggedPolicyErrors[vm.name] != error && !error.empty())
        log().warn("{}: policy metadata refused: {}; keeping mode {}", vm.name, error, foldModeName(vm.policy.mode));
      loggedPolicyErrors[vm.name] = error;
    }
    reconcileSessions();

    TickInputs inputs;
    inputs.vms = records;
    if (auto samples = parts.inventory->sample()) inputs.samples = std::move(*samples);
    inputs.previousSamples = previousSamples;
    inputs.previousNonVmCpus = previousNonVmCpus;
    for (const auto& [name, session] : sessions) inputs.channels[name] = session->snapshot();
    inputs.reserveCpus = parts.config.reserveCpus;
    inputs.cgroupV2 = hostIsCgroupV2(parts.fs);
    if (auto host = readHost(parts.fs)) {
      inputs.poolCpus = static_cast<double>(host->pool.cpus.size());
      inputs.poolSource = host->pool.source;
      if (previousTicks && host->ticks) inputs.hostBusyCpus = busyCpus(*previousTicks, *host->ticks, host->pool.cpus);
      previousTicks = host->ticks;
    }
    const auto sampled = std::chrono::steady_clock::now();
    const AllocationConfig allocation{parts.config.unfoldDelayTicks, parts.config.unfoldMarginCpus};
    latest = decideTick(allocation, inputs, hintState, ticks);
    const auto decided = std::chrono::steady_clock::now();
    previousSamples = std::move(inputs.samples);
    if (inputs.hostBusyCpus) previousNonVmCpus = latest.measuredNonVmCpus;

    const std::uint32_t ttl = parts.config.intervalMs * parts.config.ttlTicks;
    for (const auto& vm : latest.vms) {
      const auto session = sessions.find(vm.record.name);
      if (session == sessions.end()) continue;
      std::optional<protocol::Hint> hint;
      if (vm.allocation.hint) {
        std::string reason = vm.allocation.reason.substr(0, 256);
        hint = protocol::Hint{0, *vm.allocation.hint, ttl, hintPolicyOf(vm.record.policy.mode), reason};
      }
      session->second->setHint(hint);
      session->second->tick();
      if (loggedHints[vm.record.name] != vm.allocation.hint) {
        log().info("{}: hint {} -> {}: {}", vm.record.name,
                   loggedHints[vm.record.name] ? std::to_string(*loggedHints[vm.record.name]) : "none",
                   vm.allocation.hint ? std::to_string(*vm.allocation.hint) : "none", vm.allocation.reason);
        loggedHints[vm.record.name] = vm.allocation.hint;
      }
    }
    tickDuration.observe(threadCpuSeconds() - cpuStart);
    // Monotonic time, so a latency measurement on one host can line this up
    // with the agents' logs.
    const auto ms = [](auto duration) { return std::chrono::duration<double, std::milli>(duration).count(); };
    log().debug("tick {} at {:.3f} ms: inventory and samples {:.3f} ms, decide {:.3f} ms, hints queued {:.3f} ms",
                ticks, ms(started.time_since_epoch()), ms(sampled - started), ms(decided - sampled),
                ms(std::chrono::steady_clock::now() - decided));
  }

  void scheduleTick() {
    nextTick += std::chrono::milliseconds(parts.config.intervalMs);
    // After a stall (suspend, a debugger) start afresh instead of ticking in a burst.
    if (nextTick < std::chrono::steady_clock::now()) nextTick = std::chrono::steady_clock::now();
    tickTimer.expires_at(nextTick);
    tickTimer.async_wait([this](const boost::system::error_code& error) {
      if (error) return;
      tick();
      scheduleTick();
    });
  }
};

HostdDaemon::HostdDaemon(HostdParts parts) : impl_(std::make_unique<Impl>(std::move(parts))) {}
HostdDaemon::~HostdDaemon() = default;

int HostdDaemon::run() {
  auto& impl = *impl_;
  auto& config = impl.parts.config;
  impl.log().info("vcpufold-hostd {} starting: {}, tick {} ms, lease {} ticks, unfold after {} ticks, reserve {} CPUs",
                  VCPUFOLD_VERSION, impl.parts.inventory->describe(), config.intervalMs, config.ttlTicks,
                  config.unfoldDelayTicks, config.reserveCpus);
  if (!config.metricsAddress.empty()) {
    auto metrics = MetricsServer::start(impl.io, config.metricsAddress,
                                        [&impl] { return renderMetrics(impl.latest, impl.tickDuration); });
    if (!metrics) {
      impl.log().error("{}", metrics.error().message);
      return 1;
    }
    impl.metrics = std::move(*metrics);
    impl.log().info("metrics on http://{}/metrics", config.metricsAddress);
  }
  if (!config.controlSocket.empty()) {
    const auto directory = impl.parts.fs.resolve(config.controlSocket).parent_path();
    std::error_code ignored;
    std::filesystem::create_directories(directory, ignored);
    auto control = ControlServer::start(impl.io, impl.parts.fs.resolve(config.controlSocket).string(),
                                        [&impl] { return renderStatusTable(impl.latest, true); });
    if (!control) {
      impl.log().error("{}", control.error().message);
      return 1;
    }
    impl.control = std::move(*control);
  }
  impl.signals.async_wait([&impl](const boost::system::error_code& error, int signo) {
    if (error) return;
    impl.log().info("{}: stopping; hints stop and the guests' leases run out", signo == SIGTERM ? "SIGTERM" : "SIGINT");
    impl.io.stop();
  });
  impl.nextTick = std::chrono::steady_clock::now();
  impl.tick();
  impl.scheduleTick();
  impl.io.run();
  impl.sessions.clear();
  return 0;
}

Expected<TickReport> HostdDaemon::observeOnce(HostdParts& parts) {
  auto records = parts.inventory->refresh();
  if (!records) return records.error();
  auto before = parts.inventory->sample();
  if (!before) return before.error();
  auto hostBefore = readHost(parts.fs);
  if (!hostBefore) return hostBefore.error();
  std::this_thread::sleep_for(std::chrono::milliseconds(parts.config.intervalMs));
  auto after = parts.inventory->sample();
  if (!after) return after.error();
  auto hostAfter = readHost(parts.fs);
  if (!hostAfter) return hostAfter.error();
  TickInputs inputs;
  inputs.vms = *records;
  inputs.samples = *after;
  inputs.previousSamples = *before;
  inputs.poolCpus = static_cast<double>(hostAfter->pool.cpus.size());
  inputs.poolSource = hostAfter->pool.source;
  inputs.reserveCpus = parts.config.reserveCpus;
  inputs.cgroupV2 = hostIsCgroupV2(parts.fs);
  if (hostBefore->ticks && hostAfter->ticks)
    inputs.hostBusyCpus = busyCpus(*hostBefore->ticks, *hostAfter->ticks, hostAfter->pool.cpus);
  // As if every VM had a cooperative agent: what hostd would hint.
  for (const auto& vm : inputs.vms) {
    ChannelSnapshot assumed;
    assumed.cooperative = vm.channelSocket.has_value();
    inputs.channels[vm.name] = assumed;
  }
  std::map<std::string, HintState> state;
  return decideTick(AllocationConfig{parts.config.unfoldDelayTicks, parts.config.unfoldMarginCpus}, inputs, state, 1);
}

}  // namespace vcpufold::hostd
