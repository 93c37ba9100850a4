// vcpufold-bench-contention: emulated VMs on this host's real scheduler, run
// side by side unfolded, under the agents' steal law alone, under vcpufold
// (hostd and agents) and right-sized by an oracle. See README.md here.

#include <sched.h>
#include <sys/utsname.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench_run.h"
#include "report.h"
#include "scenarios.h"

namespace {

using namespace vcpufold::bench;

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, ',');)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

std::string machineDescription(unsigned cpus) {
  utsname name{};
  ::uname(&name);
  const bool v2 = std::filesystem::exists("/sys/fs/cgroup/cgroup.controllers") &&
                  !std::filesystem::exists("/sys/fs/cgroup/cpu/cpu.shares");
  return std::to_string(cpus) + " CPUs, Linux " + name.release + ", CPU groups: cgroup " +
         (v2 ? "v2 cpu.weight" : "v1 cpu.shares") +
         "; VMs are emulated (threads on the host scheduler, not KVM guests)";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Runs emulated VMs (vcpufold-emulated-vm: vCPU threads on this host's real scheduler, each VM in its own CPU "
      "group with its weight) in each mode side by side, and writes a Markdown table, a CSV file and a PNG plot.\n"
      "Modes: unfolded (no folding), steal-law (the agents' fallback alone), vcpufold (hostd and the agents), oracle "
      "(each VM statically right-sized). Needs root for the CPU groups.",
      "vcpufold-bench-contention"};
  BenchConfig config;
  config.emulatedVm = VCPUFOLD_EMULATED_VM;
  config.agent = VCPUFOLD_AGENT_BINARY;
  config.hostd = VCPUFOLD_HOSTD_BINARY;
  config.workDirectory = "/var/tmp/vcpufold-bench/contention";
  std::string outDirectory, plan = "steady:spinlock,steady:compute,load-step:spinlock,weights:spinlock",
                            modes = "unfolded,steal-law,vcpufold,oracle";
  app.add_option("--work", config.workDirectory, "run directories (logs of every VM, agent and hostd)")
      ->capture_default_str();
  app.add_option("--out", outDirectory, "where results.md, results.csv and contention.png go (default: WORK/results)");
  app.add_option("--plan", plan,
                 "comma-separated SCENARIO:WORKLOAD pairs; scenarios steady, load-step, weights; "
                 "workloads spinlock, compute")
      ->capture_default_str();
  app.add_option("--modes", modes, "comma-separated modes, run side by side for each pair")->capture_default_str();
  app.add_option("--warmup", config.warmupSeconds, "seconds before the window (steady scenarios)")
      ->capture_default_str()
      ->check(CLI::Range(0, 600));
  app.add_option("--step-after", config.stepAfterSeconds, "load-step: seconds before the step")
      ->capture_default_str()
      ->check(CLI::Range(1, 600));
  app.add_option("--measure", config.measureSeconds, "seconds in the window")
      ->capture_default_str()
      ->check(CLI::Range(1, 600));
  app.add_option("--tick-ms", config.tickMs, "hostd's tick and the agents' interval")
      ->capture_default_str()
      ->check(CLI::Range(100, 60000));
  app.add_option("--emulated-vm", config.emulatedVm, "vcpufold-emulated-vm binary")->capture_default_str();
  app.add_option("--agent", config.agent, "vcpufold-agent binary")->capture_default_str();
  app.add_option("--hostd", config.hostd, "vcpufold-hostd binary")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (outDirectory.empty()) outDirectory = config.workDirectory + "/results";

  cpu_set_t affinity;
  CPU_ZERO(&affinity);
  ::sched_getaffinity(0, sizeof affinity, &affinity);
  const auto cpus = static_cast<unsigned>(CPU_COUNT(&affinity));
  config.pcpus = cpus;

  std::vector<Mode> modeList;
  for (const auto& name : split(modes)) {
    Mode mode{};
    if (!parseMode(name, mode)) {
      std::fprintf(stderr, "vcpufold-bench-contention: unknown mode '%s'\n", name.c_str());
      return 2;
    }
    modeList.push_back(mode);
  }
  const auto scenarios = standardScenarios();
  std::vector<std::pair<const Scenario*, WorkloadKind>> pairs;
  for (const auto& item : split(plan)) {
    const auto colon = item.find(':');
    const std::string scenarioName = item.substr(0, colon);
    WorkloadKind workload{};
    const auto scenario =
        std::find_if(scenarios.begin(), scenarios.end(), [&](const Scenario& s) { return s.name == scenarioName; });
    if (colon == std::string::npos || scenario == scenarios.end() ||
        !parseWorkloadKind(item.substr(colon + 1), workload)) {
      std::fprintf(stderr, "vcpufold-bench-contention: bad plan item '%s' (SCENARIO:WORKLOAD)\n", item.c_str());
      return 2;
    }
    pairs.emplace_back(&*scenario, workload);
  }

  std::filesystem::create_directories(outDirectory);
  const auto started = std::chrono::steady_clock::now();
  std::vector<RunResult> runs;
  for (const auto& [scenario, workload] : pairs) {
    for (Mode mode : modeList) {
      std::printf("%-10s %-9s %-10s ", scenario->name.c_str(),
                  workload == WorkloadKind::Spinlock ? "spinlock" : "compute", modeName(mode));
      std::fflush(stdout);
      try {
        runs.push_back(runOnce(config, *scenario, workload, mode));
      } catch (const std::exception& error) {
        std::fprintf(stderr, "\nvcpufold-bench-contention: %s\n", error.what());
        return 1;
      }
      const auto& run = runs.back();
      std::printf("%10.0f ops/s  delay %3.0f%%  changes/min %5.1f\n", run.totalOperationsPerSecond(),
                  run.meanDelayRatio() * 100, run.preferredChangesPerMinute());
    }
  }
  ReportContext context;
  context.machine = machineDescription(cpus);
  context.tickMs = config.tickMs;
  std::string command = "vcpufold-bench-contention";
  for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
  context.command = command;
  const std::string markdown = markdownReport(context, runs);
  std::ofstream(outDirectory + "/results.md") << markdown;
  std::ofstream(outDirectory + "/results.csv") << csvReport(runs);
  std::ofstream(outDirectory + "/plot.dat") << plotData(runs);
  std::ofstream(outDirectory + "/plot.gp")
      << gnuplotScript(outDirectory + "/plot.dat", outDirectory + "/contention.png");
  const int plotted =
      std::system(("gnuplot '" + outDirectory + "/plot.gp' 2>'" + outDirectory + "/gnuplot.log'").c_str());
  std::printf("\n%s\n", markdown.c_str());
  std::printf("results in %s (%s); %.0f s\n", outDirectory.c_str(),
              plotted == 0 ? "with contention.png" : "no plot: gnuplot failed, see gnuplot.log",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  return 0;
}
