// SPDX-License-Identifier: GPL-2.0-or-later
// vcpufold-bench-contention: emulated VMs on this host's real scheduler, in
// the scenarios of bench/contention/scenarios/ (or any file given), measured
// side by side in every mode with repetitions. See README.md here.

#include <sys/utsname.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "bench_text.h"
#include "measure_scenario.h"
#include "plots.h"
#include "random_summary.h"
#include "report.h"
#include "scenario_random.h"
#include "search_space.h"

namespace {

using namespace vcpufold::bench;

std::string machineDescription() {
  utsname name{};
  ::uname(&name);
  const bool v2 = std::filesystem::exists("/sys/fs/cgroup/cgroup.controllers");
  return std::to_string(std::thread::hardware_concurrency()) + " CPUs, Linux " + name.release + ", cgroup " +
         (v2 ? "v2" : "v1") + "; VMs are emulated (threads on the host scheduler, not KVM guests)";
}

// What a drawn scenario is, in a table cell: "3 VMs on 2 pCPUs: 4, 8 (SMT2), 2* vCPUs"
// (* no agent), the workloads.
std::string shapeOf(const Scenario& scenario) {
  std::string vcpus, workloads;
  for (const auto& vm : scenario.vms) {
    vcpus += (vcpus.empty() ? "" : ", ") + std::to_string(vm.vcpus) + (vm.threadsPerCore > 1 ? " (SMT2)" : "") +
             (vm.agent ? "" : "*");
    if (workloads.find(vm.workload) == std::string::npos) workloads += (workloads.empty() ? "" : ", ") + vm.workload;
  }
  return std::to_string(scenario.vms.size()) + " VMs on " + std::to_string(scenario.pcpus) + " pCPU" +
         (scenario.pcpus == 1 ? "" : "s") + ": " + vcpus + " vCPUs; " + workloads;
}

std::optional<Estimate> pairedRatio(const ScenarioOutcome& outcome, Mode base) {
  return pairedRatioOf(outcome, Mode::Vcpufold, base);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Runs emulated VMs (vcpufold-emulated-vm: vCPU threads on this host's real scheduler, each VM in its own CPU "
      "group with its weight, all in a cpuset of the scenario's pCPUs) in each mode side by side, with repetitions, "
      "and writes results.md, results.csv, series.csv and plots.\n"
      "Modes: unfolded, steal-law (the agents alone), vcpufold (hostd and the agents), static-fair, always-1, "
      "best-static and clairvoyant (found by measuring fixed counts). Needs root for the CPU groups and the cpuset.",
      "vcpufold-bench-contention"};
  BenchConfig config;
  ReportContext context;
  config.binaries = {VCPUFOLD_EMULATED_VM, VCPUFOLD_AGENT_BINARY, VCPUFOLD_HOSTD_BINARY};
  config.workDirectory = "/var/tmp/vcpufold-bench/contention";
  std::string outDirectory, modes, only, scenarioDirectory = VCPUFOLD_SCENARIO_DIR;
  std::vector<std::string> scenarioFiles;
  MeasureOptions options;
  bool quick = false, noSearch = false, planOnly = false;
  unsigned randomCount = 0;
  std::uint32_t randomSeed = 1;
  RandomBounds bounds;
  bounds.maxPcpus = std::max(1u, std::thread::hardware_concurrency());
  app.add_option("--scenario", scenarioFiles,
                 "a scenario file to run (repeatable; default: every *.toml in --scenarios)")
      ->check(CLI::ExistingFile);
  app.add_option("--scenarios", scenarioDirectory, "the standard set's directory")->capture_default_str();
  auto* randomOption =
      app.add_option("--random", randomCount,
                     "draw N scenarios instead of the standard set (2-6 VMs, 1-16 vCPUs, SMT 1 or 2, weights 25-400, "
                     "every workload and mixes, constant/step/square/walk schedules, sometimes no agent); each runs "
                     "unfolded, steal-law, vcpufold, static-fair and best-static; the report gives the spread of "
                     "vcpufold's ratios and every loss, and every drawn scenario is written out as a file")
          ->check(CLI::Range(1, 1000));
  app.add_option("--seed", randomSeed, "the random draw's seed: the same seed draws the same scenarios")
      ->capture_default_str();
  app.add_option("--random-pcpus", bounds.maxPcpus, "the most pCPUs a drawn scenario may use (default: this machine's)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--random-search", bounds.searchSeconds, "a drawn scenario's best-static probe budget, seconds")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 3600.0));
  app.add_option("--only", only, "comma-separated scenario names to keep (e.g. steady/spinlock,large-dynamic)");
  app.add_option("--modes", modes, "comma-separated modes to keep of those each scenario lists");
  const auto* repetitionsOption =
      app.add_option("--repetitions", options.repetitions,
                     "runs of every mode, interleaved; given, it overrides the scenario files' own `repetitions`")
          ->capture_default_str()
          ->check(CLI::Range(1, 100));
  app.add_option("--probe", options.probeSeconds, "seconds each search candidate is measured")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 60.0));
  app.add_flag("--no-search", noSearch, "skip best-static and clairvoyant");
  app.add_flag("--plan", planOnly,
               "print each scenario's search plan (its distinct demands, the size of each one's space of fixed counts, "
               "exhaustive or descents, the probe budget) and the scenario files of a --random draw, then exit "
               "without running anything (no root needed)");
  app.add_flag("--quick", quick,
               "a smoke test of the bench (under 2 minutes): steady/spinlock, unfolded and vcpufold, one repetition, "
               "no search; its ratios show nothing");
  app.add_option("--work", config.workDirectory, "run directories (logs of every VM, agent and hostd)")
      ->capture_default_str();
  app.add_option("--out", outDirectory, "where the results go (default: WORK/results)");
  app.add_option("--image-prefix", context.imagePrefix, "prefix of the plots' paths in results.md");
  app.add_option("--tick-ms", config.tickMs, "hostd's tick and the agents' interval")
      ->capture_default_str()
      ->check(CLI::Range(100, 60000));
  unsigned unfoldDelayMs = 0;
  const CLI::Option* unfoldDelayOption =
      app.add_option("--unfold-delay-ms", unfoldDelayMs,
                     "hostd's unfold_delay_ms in the vcpufold mode (default: hostd's own, 1000 ms); the run's "
                     "Reproduce line names it")
          ->check(CLI::Range(0u, 600000u));
  app.add_option("--emulated-vm", config.binaries.emulatedVm, "vcpufold-emulated-vm binary")->capture_default_str();
  app.add_option("--agent", config.binaries.agent, "vcpufold-agent binary")->capture_default_str();
  app.add_option("--hostd", config.binaries.hostd, "vcpufold-hostd binary")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (unfoldDelayOption->count() > 0) config.unfoldDelayMs = unfoldDelayMs;
  if (outDirectory.empty()) outDirectory = config.workDirectory + "/results";
  options.repetitionsGiven = repetitionsOption->count() > 0;
  if (quick) {
    options.repetitions = 1;
    options.repetitionsGiven = true;
    noSearch = true;
    if (only.empty()) only = "steady/spinlock";
    if (modes.empty()) modes = "unfolded,vcpufold";
  }
  options.search = !noSearch;
  const auto listed = [](const std::string& list, const std::string& item) {
    if (list.empty()) return true;
    const auto items = splitCommaList(list);
    return std::find(items.begin(), items.end(), item) != items.end();
  };
  std::vector<Scenario> scenarios;
  const bool random = randomOption->count() > 0;
  if (random && (!scenarioFiles.empty() || quick)) {
    std::fprintf(stderr,
                 "vcpufold-bench-contention: --random draws its own scenarios; leave out --scenario and --quick\n");
    return 2;
  }

  if (random) {
    // Every drawn scenario as a file: any of them can be run again alone.
    const std::string drawnDirectory = outDirectory + "/random-scenarios";
    std::error_code made;
    std::filesystem::create_directories(drawnDirectory, made);
    if (made) {
      std::fprintf(stderr, "vcpufold-bench-contention: cannot make %s: %s\n", drawnDirectory.c_str(),
                   made.message().c_str());
      return 1;
    }
    // What runs is what the file says: each is read back from its file.
    for (const auto& drawn : drawScenarios(randomCount, randomSeed, bounds)) {
      const std::string path = drawnDirectory + "/" + drawn.name + ".toml";
      if (!writeWholeFile(path, scenarioFileText(drawn))) {
        std::fprintf(stderr, "vcpufold-bench-contention: cannot write %s\n", path.c_str());
        return 1;
      }
      scenarioFiles.push_back(path);
    }
  } else if (scenarioFiles.empty()) {
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(scenarioDirectory, error))
      if (entry.path().extension() == ".toml") scenarioFiles.push_back(entry.path().string());
    if (error || scenarioFiles.empty()) {
      std::fprintf(stderr, "vcpufold-bench-contention: no scenario files in %s\n", scenarioDirectory.c_str());
      return 2;
    }
    std::sort(scenarioFiles.begin(), scenarioFiles.end());
  }
  for (const auto& file : scenarioFiles) {
    std::string error;
    auto parsed = readScenarioFile(file, error);
    if (!parsed) {
      std::fprintf(stderr, "vcpufold-bench-contention: %s\n", error.c_str());
      return 2;
    }
    for (auto& scenario : *parsed) {
      if (!listed(only, scenario.name)) continue;
      std::erase_if(scenario.modes, [&](Mode mode) { return !listed(modes, modeName(mode)); });
      scenarios.push_back(scenario);
    }
  }
  if (scenarios.empty()) {
    std::fprintf(stderr, "vcpufold-bench-contention: no scenario left to run (--only %s)\n", only.c_str());
    return 2;
  }

  if (planOnly) {
    for (const auto& scenario : scenarios) {
      std::printf("%s (%s): search budget %.0f s, probes of %.1f s\n", scenario.name.c_str(), scenario.source.c_str(),
                  scenario.searchSeconds, options.probeSeconds);
      for (const auto& plan : planSearch(scenario, options.probeSeconds)) {
        std::string tasks;
        for (unsigned count : plan.tasks) tasks += (tasks.empty() ? "" : "/") + std::to_string(count);
        const std::string space = plan.space > kExhaustiveLimit ? "more than " + std::to_string(kExhaustiveLimit)
                                                                : std::to_string(plan.space);
        std::printf("  demand %s tasks (%.1f s of the window): %s assignments, %s (up to %u probes)\n", tasks.c_str(),
                    plan.seconds, space.c_str(), plan.exhaustive ? "exhaustive" : "descents from 5 starts",
                    plan.maxMeasurements);
      }
    }
    return 0;
  }

  std::filesystem::create_directories(outDirectory);
  options.progress = [](const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  const auto started = std::chrono::steady_clock::now();
  std::vector<ScenarioOutcome> outcomes;
  for (const auto& scenario : scenarios) {
    try {
      outcomes.push_back(measureScenario(config, scenario, options));
    } catch (const std::exception& error) {
      std::fprintf(stderr, "vcpufold-bench-contention: %s: %s\n", scenario.name.c_str(), error.what());
      return 1;
    }
  }
  context.machine = machineDescription();
  context.tickMs = config.tickMs;
  context.repetitions = options.repetitions;
  context.date = todayUtc();
  const char* commit = std::getenv("VCPUFOLD_COMMIT");  // bench/run.sh sets it
  context.commit = commit ? commit : "(commit not given: set VCPUFOLD_COMMIT)";
  std::string command = "vcpufold-bench-contention";
  for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
  context.command = command;
  context.standardSummary = !random;
  std::ofstream(outDirectory + "/results.csv") << runsCsv(outcomes);
  std::ofstream(outDirectory + "/series.csv") << seriesCsv(outcomes);
  std::string plotError;
  context.plots = drawPlots(outDirectory, outcomes, plotError);
  context.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::string markdown = markdownReport(context, outcomes);
  if (random) {
    std::vector<RandomScenarioRatios> ratios;
    for (const auto& outcome : outcomes)
      ratios.push_back({outcome.scenario.name, shapeOf(outcome.scenario), pairedRatio(outcome, Mode::Unfolded),
                        pairedRatio(outcome, Mode::StealLaw), pairedRatio(outcome, Mode::StaticFair),
                        pairedRatio(outcome, Mode::BestStatic)});
    // Each loss's scenario beside the report, to be run again alone.
    const std::string lossDirectory = outDirectory + "/random-losses";
    std::error_code made;
    std::filesystem::create_directories(lossDirectory, made);
    for (const auto& loss : lossesOf(ratios)) {
      std::error_code error;
      std::filesystem::copy_file(outDirectory + "/random-scenarios/" + loss.scenario + ".toml",
                                 lossDirectory + "/" + loss.scenario + ".toml",
                                 std::filesystem::copy_options::overwrite_existing, error);
      if (error)
        std::fprintf(stderr, "vcpufold-bench-contention: cannot copy %s's file: %s\n", loss.scenario.c_str(),
                     error.message().c_str());
    }
    markdown = randomSummaryMarkdown({randomSeed, "random-losses"}, ratios) + "\n" + markdown;
  }
  std::ofstream(outDirectory + "/results.md") << markdown;
  std::printf("\n%s\n", markdown.c_str());
  if (!plotError.empty()) std::fprintf(stderr, "vcpufold-bench-contention: %s\n", plotError.c_str());
  std::printf("results in %s; %.0f s\n", outDirectory.c_str(), context.seconds);
  return 0;
}
