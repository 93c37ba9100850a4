// SPDX-License-Identifier: GPL-2.0-or-later
// vcpufold-bench-guests: does a real Linux guest, with its real scheduler and
// its real kernel locks, gain from folding as the emulated VMs do? TCG guests
// under libvirt (each vCPU a host thread on the real host scheduler, so a
// preempted lock holder makes the guest's other vCPUs spin for real) run
// hackbench and other workloads at once, unfolded, folded by vcpufold, and
// fixed at their fair share; both guest actuators (cpuset on the stock Debian
// kernel, preferred CPUs on the patched kernel); and the emulated bench's
// steady scenario of the same shape in the same run, for its ratios beside.

#include <sys/utsname.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "bench_text.h"
#include "child_process.h"
#include "fold_cost.h"
#include "fold_cost_probe.h"
#include "guest_lab.h"
#include "guest_modes.h"
#include "guests_plan.h"
#include "guests_plot.h"
#include "guests_report.h"
#include "lab_domains.h"
#include "pooled_runs.h"
#include "qemu_guest.h"
#include "where_ran.h"

namespace {

using namespace vcpufold::bench;
namespace testing = vcpufold::testing;

struct Options {
  unsigned repetitions = 5, guests = 3, vcpus = 4, pcpus = 2, emulatedRepetitions = 5, foldCostPairs = 0;
  std::string workloads = "hackbench-pipe,hackbench-socket,compute", actuators = "cpuset,cpuset-6.12,kernel", guestArgs,
              pool;
  std::string work = "/var/tmp/vcpufold-bench/guests", out, imagePrefix;
  std::string agent = VCPUFOLD_AGENT_BINARY, hostd = VCPUFOLD_HOSTD_BINARY, contention = VCPUFOLD_BENCH_CONTENTION;
};

// The emulated bench's steady scenario, the modes that match these, for the
// workloads set beside the chosen ones; fills the report's emulated part.
void runEmulated(const Options& options, const std::vector<std::string>& workloads, GuestsReportInput& report) {
  if (options.emulatedRepetitions == 0) {
    report.emulatedNote = "The emulated bench was not run (--emulated-repetitions 0).";
    return;
  }
  std::set<std::string> counterparts;
  for (const auto& workload : workloads) counterparts.insert("steady/" + findGuestWorkload(workload)->emulated);
  std::string only;
  for (const auto& name : counterparts) only += (only.empty() ? "" : ",") + name;
  const std::string out = options.work + "/emulated";
  std::filesystem::remove_all(out);
  std::filesystem::create_directories(out);
  // The run uses the build's scenario file; what it prints and records
  // names it as the repository does, so that a recorded run reads the same
  // on every machine.
  const std::string modeOptions = " --only " + only +
                                  " --modes unfolded,vcpufold,static-fair --no-search --repetitions " +
                                  std::to_string(options.emulatedRepetitions);
  const std::string arguments = "--scenario bench/contention/scenarios/steady.toml" + modeOptions;
  std::printf("emulated: vcpufold-bench-contention %s\n", arguments.c_str());
  std::fflush(stdout);
  const std::string scenario = std::string(VCPUFOLD_SCENARIO_DIR) + "/steady.toml";
  const int status = std::system(("'" + options.contention + "' --scenario '" + scenario + "'" + modeOptions +
                                  " --work '" + out + "/work' --out '" + out + "' >'" + out + "/bench.log' 2>&1")
                                     .c_str());
  if (status != 0) {
    report.emulatedNote = "The emulated bench failed (exit status " + std::to_string(status) + "; see " + out +
                          "/bench.log): no emulated ratios.";
    return;
  }
  report.emulated = readEmulatedResults(readWholeFile(out + "/results.csv"));
  report.emulatedNote = "The emulated bench's `steady` scenario (3 VMs x 4 vCPUs on 2 pCPUs, 4 busy tasks each), " +
                        std::to_string(options.emulatedRepetitions) +
                        " repetitions in this run before the guests booted: `vcpufold-bench-contention " + arguments +
                        "`. Its `static-fair` is the guests' `fixed`. Each real workload is set beside the emulated "
                        "one it resembles: hackbench beside `message`, the file churn (kernel locks) beside "
                        "`spinlock`, compute beside `compute`.";
}

// The guests of one actuator's kernel: `guests` of them, on host CPUs
// `cpuset`; the kernel image left empty (with `missingKernel` set) when the
// patched kernel is asked for and not built.
GuestLabSpec labSpecFor(const Options& options, const GuestActuator& variant, unsigned guests,
                        const std::string& hackbench, const std::string& cpuset, std::string& missingKernel) {
  GuestLabSpec spec;
  for (unsigned index = 1; index <= guests; ++index)
    spec.names.push_back("vcpufold-bench-guest-" + std::to_string(index));
  spec.agentBinary = options.agent;
  spec.hackbenchBinary = hackbench;
  spec.cpuset = cpuset;
  spec.vcpus = options.vcpus;
  spec.kernelArgs = options.guestArgs;
  spec.agentStartCommand = agentStartCommand(variant);
  spec.cloudKernel = variant.cloudKernel;
  if (variant.patchedKernel) {
    spec.kernel = testing::patchedKernelImage();
    if (!std::filesystem::exists(spec.kernel)) missingKernel = spec.kernel;
  }
  return spec;
}

// One actuator's measurements: the guests boot with the matching kernel and
// run every planned measurement.
void runActuator(const Options& options, const GuestActuator& variant, const std::vector<PlannedRun>& plan,
                 const ModeSettings& settings, const std::string& hackbench, const std::string& cpuset,
                 GuestsReportInput& report, std::ostream& whereLog) {
  const std::string& actuator = variant.name;
  ActuatorRun run{actuator, "", ""};
  std::string missingKernel;
  const GuestLabSpec spec = labSpecFor(options, variant, options.guests, hackbench, cpuset, missingKernel);
  if (!missingKernel.empty()) {
    run.skipped = "the patched kernel " + missingKernel + " is not built (tests/kernel/build-kernel.sh on builds it)";
    std::printf("%s: skipped: %s\n", actuator.c_str(), run.skipped.c_str());
    report.actuators.push_back(run);
    return;
  }
  std::printf("%s: booting %u guests\n", actuator.c_str(), options.guests);
  std::fflush(stdout);
  GuestLab lab(spec);
  run.kernel = lab.kernelRelease();
  bool actuatorChecked = false;
  for (const auto& planned : plan) {
    const GuestWorkload& workload = *findGuestWorkload(planned.workload);
    GuestSample sample{actuator, workload.name, planned.mode, planned.repetition, {}};
    std::vector<std::string> logs, where;
    const std::string hostdLog = "hostd-" + actuator + "-" + std::to_string(planned.repetition) + "-" + workload.name +
                                 "-" + guestModeName(planned.mode) + ".log";
    // hostd appends to its log: a file left by an earlier run in the same
    // work directory would add that run's lines to this measurement's count.
    std::filesystem::remove(settings.workDirectory + "/" + hostdLog);
    const auto hostdStarted = std::chrono::steady_clock::now();
    {
      ModeSession session(lab, planned.mode, settings, hostdLog);
      // (hostd alone: no agent to check.)
      if (planned.mode != GuestMode::Unfolded && !actuatorChecked && variant.agents) {
        for (const auto& used : lab.actuatorsInUse())
          if (used != variant.agentActuator)
            throw std::runtime_error("the agents apply hints via " + used + ", not " + variant.agentActuator +
                                     " (kernel " + run.kernel + ")");
        actuatorChecked = true;
      }
      logs = lab.runWorkload(workload.name, workload.size, 2, 600'000, &where);
      sample.minutes = std::chrono::duration<double>(std::chrono::steady_clock::now() - hostdStarted).count() / 60;
    }
    const std::string hostdLines = readWholeFile(settings.workDirectory + "/" + hostdLog);
    // hostd's word for an agent that did not answer a hint within its lease.
    sample.overdueAcks = countOccurrences(hostdLines, "not acknowledged in");
    sample.hostWaitCredits = countOccurrences(hostdLines, "the host kept the guest's side waiting");
    sample.hintChanges = planned.mode == GuestMode::Unfolded ? 0 : hintChangesAfterSettling(hostdLines);
    // The agents' logs: each hint's arrival, in the guest's clock, which the
    // measured unit's window is in too (its steady-time hint changes).
    const auto agentLogs = planned.mode == GuestMode::Unfolded || !variant.agents
                               ? std::vector<std::string>{}
                               : lab.onEveryGuest("cat /tmp/gb/agent.log", 60'000);
    double steadySeconds = 0;
    for (std::size_t guest = 0; guest < agentLogs.size() && guest < logs.size(); ++guest)
      if (const auto window = measuredUnitWindow(logs[guest])) {
        sample.steadyHintChanges += hintChangesWithin(agentLogs[guest], window->start, window->end);
        steadySeconds += window->end - window->start;
      }
    if (!agentLogs.empty()) sample.steadyMinutes = steadySeconds / static_cast<double>(agentLogs.size()) / 60;
    for (const auto& agentLog : agentLogs) {
      sample.changesAnsweredBeforeMade += countOccurrences(agentLog, "has not made the change to");
      for (const double ms : lateAgentLoopsMs(agentLog)) {
        ++sample.lateAgentLoops;
        sample.longestLateAgentLoopMs = std::max(sample.longestLateAgentLoopMs, ms);
      }
    }
    if (sample.overdueAcks > 0 || sample.hostWaitCredits > 0 || sample.changesAnsweredBeforeMade > 0 ||
        sample.lateAgentLoops > 0) {
      // The agents' side of those episodes (each hint's arrival and apply
      // time) beside hostd's log, to tell who waited.
      for (std::size_t guest = 0; guest < agentLogs.size(); ++guest)
        writeWholeFile(settings.workDirectory + "/" + hostdLog.substr(0, hostdLog.size() - 4) + "-agent-" +
                           std::to_string(guest + 1) + ".log",
                       agentLogs[guest]);
    }
    for (std::size_t guest = 0; guest < where.size(); ++guest) {
      WhereSample ran = parseWhere(where[guest]);
      ran.actuator = actuator;
      ran.mode = planned.mode;
      report.where.push_back(ran);
      whereLog << "# " << actuator << " " << guestModeName(planned.mode) << " " << planned.repetition << " "
               << workload.name << " " << spec.names[guest] << "\n"
               << where[guest];
    }
    std::string line = actuator + " " + std::to_string(planned.repetition) + "/" + std::to_string(options.repetitions) +
                       " " + workload.name + " " + guestModeName(planned.mode) + ":";
    for (std::size_t guest = 0; guest < logs.size(); ++guest) {
      const auto seconds = measuredUnitSeconds(logs[guest]);
      if (!seconds)
        throw std::runtime_error(spec.names[guest] + ": no second unit of " + workload.name + " in\n" + logs[guest]);
      sample.unitSeconds.push_back(*seconds);
      line += " " + format("%.2f", *seconds) + " s";
    }
    std::printf(
        "%s (%.4f units/s%s%s%s%s%s%s)\n", line.c_str(), sample.throughput(),
        sample.overdueAcks ? (", " + std::to_string(sample.overdueAcks) + " overdue acks").c_str() : "",
        sample.lateAgentLoops
            ? (", " + std::to_string(sample.lateAgentLoops) + " agent loops the guest ran late (longest " +
               format("%.0f", sample.longestLateAgentLoopMs) + " ms)")
                  .c_str()
            : "",
        sample.changesAnsweredBeforeMade ? (", " + std::to_string(sample.changesAnsweredBeforeMade) +
                                            " changes answered before the guest's kernel made them")
                                               .c_str()
                                         : "",
        sample.hostWaitCredits
            ? (", " + std::to_string(sample.hostWaitCredits) + " awaited longer for the host's wait").c_str()
            : "",
        sample.hintChanges ? (", " + std::to_string(sample.hintChanges) + " further hint changes").c_str() : "",
        sample.steadyHintChanges ? (", " + std::to_string(sample.steadyHintChanges) + " in steady time").c_str() : "");
    std::fflush(stdout);
    report.samples.push_back(sample);
  }
  report.actuators.push_back(run);
}

// --fold-cost: the probe alone, one guest per actuator's kernel; writes
// fold-cost.csv and fold-cost.md.
int runFoldCostProbe(const Options& options, const std::vector<std::string>& actuators, const std::string& hackbench,
                     FoldCostReportInput& report) {
  // The unit as long as the main bench's compute unit: its size scaled from
  // a guest's share of the pCPUs there (pcpus / guests) to the one pCPU here.
  report.unitSize = findGuestWorkload("compute")->size * options.guests / options.pcpus;
  for (const auto& name : actuators) {
    const GuestActuator& variant = *findGuestActuator(name);
    std::string missingKernel;
    const GuestLabSpec spec = labSpecFor(options, variant, 1, hackbench, "0", missingKernel);
    if (!missingKernel.empty()) {
      std::printf("%s: skipped: the patched kernel %s is not built\n", name.c_str(), missingKernel.c_str());
      continue;
    }
    std::printf("%s: fold cost, one guest on host CPU 0, %u pairs\n", name.c_str(), options.foldCostPairs);
    std::fflush(stdout);
    const auto pairs = probeFoldCost(spec, options.foldCostPairs, report.unitSize);
    report.pairs.insert(report.pairs.end(), pairs.begin(), pairs.end());
  }
  std::ofstream(options.out + "/fold-cost.csv") << foldCostCsv(report.pairs);
  const std::string markdown = renderFoldCost(report);
  std::ofstream(options.out + "/fold-cost.md") << markdown;
  std::printf("\n%s\nresults in %s\n", markdown.c_str(), options.out.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Runs TCG guests under libvirt (qemu:///system) with the real vcpufold-agent and hackbench, all at once on a "
      "few pCPUs, in three modes interleaved: unfolded (no hostd, no agents), vcpufold (hostd and the agents) and "
      "fixed (every guest's policy fixed at its fair share); with both guest actuators (cpuset on the stock Debian "
      "kernel, preferred CPUs on the patched kernel of kernel-patches/6.12); and the emulated bench's steady scenario "
      "of the same shape in the same run. Writes results.md, results.csv and guests-ratios.png. Needs root and "
      "libvirtd; a few guests boot first (minutes under TCG).",
      "vcpufold-bench-guests"};
  Options options;
  app.add_option("--repetitions", options.repetitions, "runs of every mode per workload, interleaved")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  app.add_option("--guests", options.guests, "guests running at once")->capture_default_str()->check(CLI::Range(2, 8));
  app.add_option("--vcpus", options.vcpus, "vCPUs per guest")->capture_default_str()->check(CLI::Range(2, 16));
  app.add_option("--pcpus", options.pcpus,
                 "host CPUs the guests share (the first N; on a larger machine the guests are confined to them and "
                 "hostd keeps the rest as reserve)")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  std::string allWorkloads;
  for (const auto& workload : guestWorkloads()) allWorkloads += (allWorkloads.empty() ? "" : ",") + workload.name;
  app.add_option("--workloads", options.workloads, "comma-separated, of " + allWorkloads)->capture_default_str();
  app.add_option("--actuators", options.actuators,
                 "comma-separated, of cpuset (Debian 12's stock 6.1 cloud kernel), cpuset-6.12 (Debian's stock "
                 "6.12 cloud kernel, linux-image-6.12-cloud-amd64), kernel (the patched kernel; skipped, saying why, "
                 "when it is not built), cpuset-unsteered and cpuset-6.12-unsteered (the stock kernels with the "
                 "agents' housekeeping steering off: what it does; no targets), cpuset-shipped and cpuset-6.12-shipped "
                 "(the stock kernels with the agents at their shipped fold default, which answers auto hints with "
                 "all CPUs there: what a user of such a guest gets; mode fixed still folds; no targets), "
                 "cpuset-shipped-sample-1s and cpuset-hostd-only (cpuset-shipped with the agents sampling "
                 "runnable tasks once a second, and stock 6.1 with hostd but no agents: what each part of "
                 "vcpufold's presence costs; no targets), cpuset-agent-cgroup (stock 6.1 with each agent in a "
                 "cgroup of its own, as under systemd, where the lab's agents otherwise run in the root cgroup; "
                 "both are confined to the preferred CPUs while folded; no targets), and cpuset-patched (the cpuset "
                 "actuator on the patched kernel: tells the kernel's part from the actuator's; no targets)")
      ->capture_default_str();
  app.add_option("--guest-args", options.guestArgs,
                 "appended to every guest's kernel command line (e.g. \"mitigations=off\": the stock kernel's "
                 "page-table isolation costs a TCG guest far more than a KVM one)");
  app.add_option("--emulated-repetitions", options.emulatedRepetitions,
                 "repetitions of the emulated bench's steady scenario in this run (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(0, 100));
  app.add_option("--pool", options.pool,
                 "instead of running: pools the paired repetitions of earlier runs, comma-separated results.csv "
                 "files (e.g. docs/data/guests-runs.csv), and prints each cell's ratios over all of them");
  app.add_option("--fold-cost", options.foldCostPairs,
                 "instead of the modes: the fold-cost probe, PAIRS compute units each way on one guest per actuator's "
                 "kernel, confined to host CPU 0, the loops spread over every vCPU or folded onto one (work per "
                 "pCPU second; writes fold-cost.csv and fold-cost.md; no hostd, no agent)")
      ->check(CLI::Range(0, 100));
  app.add_option("--work", options.work, "run directory: hostd's configuration and logs")->capture_default_str();
  app.add_option("--out", options.out, "where the results go (default: WORK/results)");
  app.add_option("--image-prefix", options.imagePrefix, "prefix of the plot's path in results.md");
  app.add_option("--agent", options.agent, "vcpufold-agent binary (copied into the guests)")->capture_default_str();
  app.add_option("--hostd", options.hostd, "vcpufold-hostd binary")->capture_default_str();
  app.add_option("--contention", options.contention, "vcpufold-bench-contention binary")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  if (!options.pool.empty()) {
    std::vector<std::string> sources = splitCommaList(options.pool), csvs;
    for (const auto& source : sources) {
      std::ifstream file(source);
      if (!file) {
        std::fprintf(stderr, "vcpufold-bench-guests: cannot read %s\n", source.c_str());
        return 2;
      }
      csvs.push_back(readWholeFile(source));
    }
    try {
      std::printf("%s", renderPooled(poolGuestRuns(csvs), sources).c_str());
      const std::string fold = renderFoldWithoutVcpufold(foldWithoutVcpufold(readGuestRuns(csvs)));
      if (!fold.empty()) std::printf("\nThe fold without vcpufold, pooled the same way:\n\n%s", fold.c_str());
    } catch (const std::exception& error) {
      std::fprintf(stderr, "vcpufold-bench-guests: %s\n", error.what());
      return 2;
    }
    return 0;
  }
  const auto workloads = splitCommaList(options.workloads);
  const auto actuators = splitCommaList(options.actuators);
  for (const auto& workload : workloads)
    if (!findGuestWorkload(workload)) {
      std::fprintf(stderr, "vcpufold-bench-guests: unknown workload %s (known: %s)\n", workload.c_str(),
                   allWorkloads.c_str());
      return 2;
    }
  for (const auto& actuator : actuators)
    if (!findGuestActuator(actuator)) {
      std::fprintf(stderr,
                   "vcpufold-bench-guests: unknown actuator %s (cpuset, cpuset-6.12, kernel, cpuset-patched, "
                   "cpuset-unsteered, cpuset-6.12-unsteered, cpuset-shipped, cpuset-6.12-shipped, "
                   "cpuset-shipped-sample-1s, cpuset-hostd-only or cpuset-agent-cgroup)\n",
                   actuator.c_str());
      return 2;
    }
  if (workloads.empty() || actuators.empty()) {
    std::fprintf(stderr, "vcpufold-bench-guests: no workload or no actuator to run\n");
    return 2;
  }
  if (::geteuid() != 0) {
    std::fprintf(stderr, "vcpufold-bench-guests: needs root (libvirt's system instance, the guests' policy)\n");
    return 1;
  }
  if (auto reason = testing::labUnavailableReason()) {
    std::fprintf(stderr, "vcpufold-bench-guests: no TCG lab here: %s\n", reason->c_str());
    return 1;
  }
  if (std::system("command -v libvirtd >/dev/null 2>&1") != 0) {
    std::fprintf(stderr, "vcpufold-bench-guests: libvirtd is not installed (scripts/install-deps.sh installs it)\n");
    return 1;
  }
  const unsigned online = std::thread::hardware_concurrency();
  if (options.pcpus > online) {
    std::fprintf(stderr, "vcpufold-bench-guests: --pcpus %u, but this machine has %u CPUs\n", options.pcpus, online);
    return 2;
  }
  // Stopped (Ctrl-C, a ctest timeout), it takes its guests with it: they are
  // libvirtd's children and would burn the pCPUs until the next run.
  testing::destroyLabDomainsOnStopSignal();
  if (options.out.empty()) options.out = options.work + "/results";
  std::filesystem::create_directories(options.work);
  std::filesystem::remove_all(options.out);
  std::filesystem::create_directories(options.out);

  const auto started = std::chrono::steady_clock::now();
  GuestsReportInput report;
  utsname host{};
  ::uname(&host);
  report.machine = std::to_string(online) + " CPUs, Linux " + host.release;
  const char* commit = std::getenv("VCPUFOLD_COMMIT");  // bench/run.sh sets it
  report.commit = commit ? commit : "(commit not given: set VCPUFOLD_COMMIT)";
  report.date = todayUtc();
  report.command = "vcpufold-bench-guests";
  for (int i = 1; i < argc; ++i) report.command += std::string(" ") + argv[i];
  report.guests = options.guests;
  report.vcpus = options.vcpus;
  report.pcpus = options.pcpus;
  report.repetitions = options.repetitions;
  report.workloads = workloads;
  report.fixedVcpus = fixedShareVcpus(options.pcpus, options.guests, options.vcpus);
  report.imagePrefix = options.imagePrefix;
  report.guestArgs = options.guestArgs;

  ModeSettings settings;
  settings.hostdBinary = options.hostd;
  settings.workDirectory = options.work;
  settings.fixedVcpus = report.fixedVcpus;
  settings.reserveCpus = online - options.pcpus;
  const std::string cpuset =
      options.pcpus < online ? (options.pcpus == 1 ? "0" : "0-" + std::to_string(options.pcpus - 1)) : "";

  try {
    if (options.foldCostPairs > 0) {
      FoldCostReportInput foldCost;
      foldCost.machine = report.machine;
      foldCost.commit = report.commit;
      foldCost.date = report.date;
      foldCost.command = report.command;
      foldCost.vcpus = options.vcpus;
      const std::string hackbench = testing::fetchHackbench();
      if (!std::filesystem::exists(hackbench))
        throw std::runtime_error("could not unpack hackbench from Debian's rt-tests into " + testing::labDirectory());
      return runFoldCostProbe(options, actuators, hackbench, foldCost);
    }
    // The emulated VMs first, alone on the machine: the guests are not up yet.
    runEmulated(options, workloads, report);
    const std::string hackbench = testing::fetchHackbench();
    if (!std::filesystem::exists(hackbench))
      throw std::runtime_error("could not unpack hackbench from Debian's rt-tests into " + testing::labDirectory());
    const auto plan = interleavedPlan(options.repetitions, workloads);
    std::ofstream whereLog(options.out + "/where.txt");
    for (const auto& actuator : actuators)
      runActuator(options, *findGuestActuator(actuator), plan, settings, hackbench, cpuset, report, whereLog);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "vcpufold-bench-guests: %s\n", error.what());
    return 1;
  }
  std::ofstream(options.out + "/results.csv") << guestsCsv(report.samples);
  std::string plotError;
  report.plotFile = drawGuestsPlot(options.out, report, plotError);
  report.minutes = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() / 60;
  const std::string markdown = renderGuestsReport(report);
  std::ofstream(options.out + "/results.md") << markdown;
  std::printf("\n%s\n", markdown.c_str());
  if (!plotError.empty()) std::fprintf(stderr, "vcpufold-bench-guests: %s\n", plotError.c_str());
  std::printf("results in %s; %.0f min\n", options.out.c_str(), report.minutes);
  return 0;
}
