// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/agent_app.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <thread>

#include "vcpufold/agent/agent_daemon.h"
#include "vcpufold/agent/cgroup_cpuset_actuator.h"
#include "vcpufold/agent/kernel_actuator.h"
#include "vcpufold/agent/kernel_class.h"
#include "vcpufold/agent/metrics_textfile.h"
#include "vcpufold/agent/own_priority.h"
#include "vcpufold/agent/placement.h"
#include "vcpufold/agent/platform.h"
#include "vcpufold/agent/steered_cpuset_actuator.h"
#include "vcpufold/agent/systemd_cpuset_actuator.h"
#include "vcpufold/agent/version.h"
#include "vcpufold/common/config_file.h"
#include "vcpufold/common/daemon_support.h"
#include "vcpufold/common/exit_status.h"
#include "vcpufold/common/monotonic_clock.h"
#include "vcpufold/common/system_paths.h"
#include "vcpufold/protocol/cpulist.h"

namespace vcpufold::agent {
namespace {

Expected<AgentConfig> loadConfig(const AgentOptions& options) {
  const std::string path = options.configPath.empty() ? paths::kAgentConfig : options.configPath;
  auto loaded = loadConfigFile(options.root, path, options.configExplicit, parseAgentConfig);
  if (!loaded) return loaded.error();
  AgentConfig config = *loaded;
  if (options.port) config.port = *options.port;
  if (options.logLevel) config.logLevel = *options.logLevel;
  if (options.actuator) {
    auto parsed = parseAgentConfig("[agent]\nactuator = \"" + *options.actuator + "\"\n", "--actuator");
    if (!parsed) return parsed.error();
    config.actuator = parsed->actuator;
  }
  if (auto valid = validateAgentConfig(config); !valid) return valid.error().withContext(path);
  return config;
}

struct ActuatorSelection {
  std::vector<protocol::Actuator> available;  // best first
  std::optional<std::string> cgroupRoot;
  bool throughSystemd = false;  // cpuset via AllowedCPUs= (systemd is PID 1)
  std::string notes;            // why a better one is not available
};

ActuatorSelection probeActuators(const RootedFs& fs) {
  ActuatorSelection selection;
  if (KernelActuator::isAvailable(fs))
    selection.available.push_back(protocol::Actuator::Kernel);
  else
    selection.notes += std::string("kernel: ") + paths::kCpuPreferred + " is absent or read-only; ";
  if (auto root = CgroupCpusetActuator::findUsableRoot(fs)) {
    selection.available.push_back(protocol::Actuator::Cpuset);
    selection.cgroupRoot = *root;
    selection.throughSystemd = SystemdCpusetActuator::systemdIsInit(fs);
  } else {
    selection.notes += "cpuset: " + root.error().message + "; ";
  }
  selection.available.push_back(protocol::Actuator::None);
  return selection;
}

Expected<std::unique_ptr<Actuator>> makeActuator(const AgentConfig& config, const ActuatorSelection& selection,
                                                 KnobWriter& knobs) {
  auto isAvailable = [&](protocol::Actuator kind) {
    return std::find(selection.available.begin(), selection.available.end(), kind) != selection.available.end();
  };
  protocol::Actuator kind = selection.available.front();
  if (config.actuator == ActuatorChoice::Kernel) kind = protocol::Actuator::Kernel;
  if (config.actuator == ActuatorChoice::Cpuset) kind = protocol::Actuator::Cpuset;
  if (config.actuator == ActuatorChoice::None) kind = protocol::Actuator::None;
  if (!isAvailable(kind))
    return Error{std::string("actuator ") + protocol::actuatorName(kind) + " is not available: " + selection.notes};
  switch (kind) {
    case protocol::Actuator::Kernel:
      return std::unique_ptr<Actuator>(std::make_unique<KernelActuator>(knobs));
    case protocol::Actuator::Cpuset: {
      std::unique_ptr<Actuator> cpuset;
      if (selection.throughSystemd) {
        auto units = connectSystemd();
        if (!units) return Error{"actuator cpuset: systemd is PID 1 but " + units.error().message};
        cpuset = std::make_unique<SystemdCpusetActuator>(knobs.fs(), *selection.cgroupRoot, std::move(*units));
      } else {
        cpuset = std::make_unique<CgroupCpusetActuator>(knobs, *selection.cgroupRoot, config.moveRootTasks);
      }
      if (!config.steerHousekeeping) return cpuset;
      return std::unique_ptr<Actuator>(
          std::make_unique<SteeredCpusetActuator>(std::move(cpuset), knobs, *selection.cgroupRoot));
    }
    case protocol::Actuator::None:
      break;
  }
  return std::unique_ptr<Actuator>(std::make_unique<NoneActuator>());
}

// Unfolds whatever this or an earlier agent left: the kernel mask and the cpuset state.
Expected<void> restoreEverything(const RootedFs& fs, spdlog::logger& log) {
  KnobWriter knobs(fs);
  std::optional<Error> firstError;
  if (KernelActuator::isAvailable(fs)) {
    if (auto done = KernelActuator(knobs).restore(); !done)
      firstError = done.error();
    else
      log.debug("kernel preferred mask reset to all active CPUs");
  }
  // The parked partition first: the cgroups' cpusets can widen only once it is gone.
  if (HousekeepingSteering::hasLeftovers(fs)) {
    log.info("undoing the housekeeping steering an earlier agent left (IRQs, workqueue mask, parked CPUs)");
    if (auto done = HousekeepingSteering::restoreFromState(fs); !done && !firstError) firstError = done.error();
  }
  if (CgroupCpusetActuator::hasLeftovers(fs)) {
    log.info("undoing the cpuset folding an earlier agent left");
    if (auto done = CgroupCpusetActuator::restoreFromState(fs); !done && !firstError) firstError = done.error();
  }
  if (SystemdCpusetActuator::hasLeftovers(fs)) {
    log.info("resetting the AllowedCPUs= an earlier agent set");
    auto units = connectSystemd();
    if (!units) {
      if (!firstError) firstError = units.error();
    } else if (auto done = SystemdCpusetActuator::restoreFromState(fs, **units); !done && !firstError) {
      firstError = done.error();
    }
  }
  if (firstError) return *firstError;
  return {};
}

// The guest's kernel class for the actuator that folds it.
KernelClass kernelClassOf(const RootedFs& fs, protocol::Actuator actuator) {
  auto release = fs.readFile(paths::kProcOsRelease);
  std::optional<std::string> text;
  if (release) {
    text = *release;
    while (!text->empty() && (text->back() == '\n' || text->back() == ' ')) text->pop_back();
  }
  return classifyKernel(text, actuator);
}

// The configuration, or none after saying on stderr why not.
std::optional<AgentConfig> configOrSay(const AgentOptions& options) {
  auto config = loadConfig(options);
  if (config) return *config;
  std::fprintf(stderr, "vcpufold-agent: %s\n", config.error().message.c_str());
  return std::nullopt;
}

}  // namespace

int checkConfig(const AgentOptions& options) {
  auto config = loadConfig(options);
  if (!config) {
    std::fprintf(stderr, "%s\n", config.error().message.c_str());
    return kExitConfig;
  }
  std::printf(
      "configuration ok: interval %u ms, sample %u ms, actuator %s, fold %s, fallback %s (high %u bp, low %u bp), "
      "port %s\n",
      config->intervalMs, config->sampleMs, actuatorChoiceName(config->actuator), foldDefaultName(config->foldDefault),
      config->fallbackEnabled ? "on" : "off", config->highThresholdBp, config->lowThresholdBp,
      config->port.empty() ? ("by name " + config->portName).c_str() : config->port.c_str());
  return 0;
}

namespace {

// A killed agent's last metrics textfile still says what it had folded. Once
// the guest is unfolded, it says so, and that no agent runs. A configuration
// that cannot be read, or no textfile, leaves nothing to do.
void markTextfileStopped(const AgentOptions& options, const RootedFs& fs, spdlog::logger& log) {
  const auto config = loadConfig(options);
  if (!config || config->metricsTextfile.empty() || !fs.exists(config->metricsTextfile)) return;
  const auto topology = readTopology(fs);
  if (!topology) return;
  AgentMetricsSnapshot snapshot;
  snapshot.running = false;
  snapshot.version = kAgentVersion;
  snapshot.online = topology->online;
  snapshot.preferred = topology->online;
  if (auto written = fs.replaceFile(config->metricsTextfile, formatMetricsTextfile(snapshot), 0644); !written)
    log.warn("restore: metrics textfile not updated: {}", written.error().message);
}

}  // namespace

int runRestore(const AgentOptions& options) {
  auto log = makeDaemonLogger("vcpufold-agent", options.logLevel.value_or("info"));
  const RootedFs fs(options.root);
  if (auto done = restoreEverything(fs, *log); !done) {
    log->error("restore: {}", done.error().message);
    return 1;
  }
  log->info("restore: the guest is unfolded");
  markTextfileStopped(options, fs, *log);
  return 0;
}

int runAgent(const AgentOptions& options) {
  const auto config = configOrSay(options);
  if (!config) return kExitConfig;
  auto log = makeDaemonLogger("vcpufold-agent", config->logLevel);
  // Before anything else runs: a folded, loaded guest must still hear from its agent promptly.
  if (auto raised = setOwnNice(config->nice); !raised)
    log->warn("{} (agent.nice); the agent may answer late while its guest is folded and loaded",
              raised.error().message);
  else
    log->debug("running at nice {}", ownNice());
  const RootedFs fs(options.root);
  auto topology = readTopology(fs);
  if (!topology) {
    log->error("cannot read the CPU topology: {}", topology.error().message);
    return 1;
  }
  if (auto repaired = restoreEverything(fs, *log); !repaired)
    log->warn("repairing an earlier fold: {}", repaired.error().message);

  KnobWriter knobs(fs);  // outlives the daemon, which holds the actuator using it
  auto selection = probeActuators(fs);
  const auto refusal = foldingRefusal(detectPlatform(fs));
  if (refusal) {
    // Never folded, by hints or by the fallback: only the none actuator.
    log->warn("{}; hints will be acknowledged with actuator none, the steal-time fallback is off", *refusal);
    selection.available = {protocol::Actuator::None};
  }
  auto actuator = refusal ? Expected<std::unique_ptr<Actuator>>(std::make_unique<NoneActuator>())
                          : makeActuator(*config, selection, knobs);
  if (!actuator) {
    // The configuration asks for an actuator this guest does not have.
    log->error("{}", actuator.error().message);
    return kExitConfig;
  }
  const KernelClass kernelClass = kernelClassOf(fs, (*actuator)->kind());
  const auto declined = autoFoldDeclined(kernelClass, config->foldDefault);
  if (declined && !refusal) log->warn("{}", *declined);
  auto transport = makeTransport(fs, config->port, config->portName);
  if (!transport) {
    log->error("{}", transport.error().message);
    return 1;
  }
  AgentDaemonParts parts{*config,
                         fs,
                         *topology,
                         selection.available,
                         std::move(*actuator),
                         std::move(*transport),
                         refusal,
                         kernelClass,
                         declined,
                         [options] { return loadConfig(options); },
                         log};
  return AgentDaemon(std::move(parts)).run();
}

int runOneshot(const AgentOptions& options) {
  const auto config = configOrSay(options);
  if (!config) return kExitConfig;
  auto log = makeDaemonLogger("vcpufold-agent", config->logLevel);
  const RootedFs fs(options.root);
  auto topology = readTopology(fs);
  if (!topology) {
    std::fprintf(stderr, "cannot read the CPU topology: %s\n", topology.error().message.c_str());
    return 1;
  }
  const Platform platform = detectPlatform(fs);
  const auto selection = probeActuators(fs);
  KnobWriter knobs(fs);
  auto actuator = makeActuator(*config, selection, knobs);
  const PlacementPlan plan(*topology);
  using protocol::formatCpuList;

  std::printf("vcpufold-agent %s --oneshot (root %s)\n", kAgentVersion, options.root.c_str());
  const auto refusal = foldingRefusal(platform);
  std::printf("platform       %s%s%s\n", platform.isVirtualMachine ? "virtual machine" : "not a virtual machine",
              platform.isXenDom0 ? ", Xen dom0" : "",
              refusal ? ": never folded (hints acknowledged with actuator none)" : "");
  std::printf("online CPUs    %s (possible %s)\n", formatCpuList(topology->online).c_str(),
              formatCpuList(topology->possible).c_str());
  std::printf("housekeeping   %s\n", formatCpuList(topology->housekeeping).c_str());
  std::printf("cores          %zu, up to %u threads each, %u NUMA node(s)\n", topology->cores.size(),
              topology->threadsPerCore, topology->numaNodes);
  std::string available;
  for (auto kind : selection.available)
    available += std::string(available.empty() ? "" : ", ") + protocol::actuatorName(kind);
  std::printf("actuators      %s; chosen: %s%s\n", available.c_str(),
              actuator ? protocol::actuatorName((*actuator)->kind()) : actuator.error().message.c_str(),
              actuator && (*actuator)->kind() == protocol::Actuator::Cpuset
                  ? (std::string(selection.throughSystemd ? " (through systemd AllowedCPUs=)" : " (cgroupfs directly)") +
                     (config->steerHousekeeping ? ", housekeeping steered" : ", housekeeping not steered"))
                        .c_str()
                  : "");
  if (!selection.notes.empty()) std::printf("               (%s)\n", selection.notes.c_str());
  if (actuator) {
    const KernelClass kernelClass = kernelClassOf(fs, (*actuator)->kind());
    const auto declined = autoFoldDeclined(kernelClass, config->foldDefault);
    const auto release = fs.readFile(paths::kProcOsRelease);
    std::printf("kernel class   %s (%s): auto hints %s\n", kernelClassName(kernelClass),
                release ? release->substr(0, release->find('\n')).c_str() : "release unreadable",
                declined ? "acknowledged with all CPUs, not applied" : "fold it");
    std::printf("               (%s%s)\n", evidenceFor(kernelClass).figures.c_str(),
                config->foldDefault == FoldDefault::Always ? "; fold = always" : "");
  }
  if (auto preferred = fs.readFile(paths::kCpuPreferred)) std::printf("kernel mask    %s", preferred->c_str());
  auto port = config->port.empty() ? findVirtioPort(fs, config->portName) : Expected<std::string>(config->port);
  std::printf("host channel   %s\n", port ? port->c_str() : port.error().message.c_str());

  std::string order;
  for (const auto& core : plan.coresInKeepOrder()) order += " [" + formatCpuList(core.threads) + "]";
  std::printf("keep order    %s\n", order.c_str());
  std::printf("placement     ");
  for (unsigned k = 1; k <= topology->online.size(); ++k)
    std::printf(" %u:%s", k, formatCpuList(plan.forCpus(k).cpus).c_str());
  std::printf("\n");

  // Steal and demand over one sample period.
  auto readStat = [&fs]() -> std::optional<std::pair<ProcStat, StealReading>> {
    auto text = fs.readFile(paths::kProcStat);
    if (!text) return std::nullopt;
    auto sample = parseProcStat(*text);
    if (!sample) return std::nullopt;
    return std::pair{*sample, stealReadingOf(*sample, monotonicNow())};
  };
  const auto before = readStat();
  std::this_thread::sleep_for(std::chrono::milliseconds(config->sampleMs));
  const auto after = readStat();
  if (before && after) {
    const auto steal = stealRatioBp(before->second, after->second, ::sysconf(_SC_CLK_TCK));
    const StealLawConfig law{config->intervalMs, config->highThresholdBp, config->lowThresholdBp};
    const FoldStep step = stealLawStep(law, steal);
    const bool allowed = config->fallbackEnabled && !refusal;
    std::printf("steal          %u bp over %u ms; %u runnable tasks now\n", steal, config->sampleMs,
                after->first.procsRunning > 0 ? after->first.procsRunning - 1 : 0);
    std::printf("fallback       %s: %s\n", allowed ? "allowed" : "not allowed",
                step == FoldStep::FoldOneCore     ? "would fold one core (steal above high)"
                : step == FoldStep::UnfoldOneCore ? "would unfold one core (steal at or below low)"
                                                  : "would hold (steal between the thresholds)");
  } else {
    std::printf("steal          /proc/stat unreadable\n");
  }
  return 0;
}

}  // namespace vcpufold::agent
