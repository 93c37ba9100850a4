// vcpufold-bench-latency: how long a demand change takes to reach a guest's
// preferred mask, in both directions, split into its stages. Two emulated VMs
// on 2 pCPUs (the bench's cpuset) with real agents and a real hostd: vm-a runs
// 2 tasks; vm-b wakes with 4 (the pool is contended: hostd folds vm-a to 1)
// and goes idle again (vm-a may unfold, once hostd's unfold delay has passed).
// Repeated; the stages come from the monotonic times the agents and hostd log
// at debug level and the VMs' own timelines:
//   report  the change until vm-b's agent sent its status (two samples of
//           procs_running, then at once)
//   decide  that status until hostd's decision that changed vm-a's hint
//           (the debounce, and for an unfold the unfold delay)
//   send    the decision until vm-a's agent read the hint
//   apply   vm-a's agent choosing and writing the CPUs
//   total   the change until the mask was applied

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <regex>
#include <thread>

#include "fleet.h"

namespace {

using namespace vcpufold::bench;

struct Decision {
  double atMs = 0;  // when hostd started deciding
};

struct AgentHint {
  double receivedMs = 0, applyMs = 0;
  unsigned vcpus = 0;
};

std::vector<Decision> readDecisions(const std::string& path) {
  const std::regex line(R"(decision \d+ at ([0-9.]+) ms: )");
  std::vector<Decision> decisions;
  std::ifstream file(path);
  for (std::string text; std::getline(file, text);) {
    std::smatch match;
    if (std::regex_search(text, match, line)) decisions.push_back({std::stod(match[1])});
  }
  return decisions;
}

std::vector<AgentHint> readAgentHints(const std::string& path) {
  const std::regex received(R"(\((\d+) vCPUs\) received at ([0-9.]+) ms, applied in ([0-9.]+) ms)");
  std::vector<AgentHint> hints;
  std::ifstream file(path);
  for (std::string line; std::getline(file, line);) {
    std::smatch match;
    if (std::regex_search(line, match, received))
      hints.push_back({std::stod(match[2]), std::stod(match[3]), static_cast<unsigned>(std::stoul(match[1]))});
  }
  return hints;
}

std::vector<double> readEarlyStatuses(const std::string& path) {
  const std::regex sent(R"(demand [0-9.]+ tasks at ([0-9.]+) ms: status sent now)");
  std::vector<double> times;
  std::ifstream file(path);
  for (std::string line; std::getline(file, line);) {
    std::smatch match;
    if (std::regex_search(line, match, sent)) times.push_back(std::stod(match[1]));
  }
  return times;
}

struct Stages {
  std::vector<double> report, decide, send, apply, total;
};

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(q * static_cast<double>(values.size() - 1) + 0.5)];
}

void printStages(const char* direction, const Stages& stages, unsigned asked) {
  std::printf("%-7s %3zu of %u changes timed\n", direction, stages.total.size(), asked);
  std::printf("  %-8s %10s %10s %10s\n", "stage", "median", "p95", "max");
  const std::pair<const char*, const std::vector<double>*> rows[] = {{"report", &stages.report},
                                                                     {"decide", &stages.decide},
                                                                     {"send", &stages.send},
                                                                     {"apply", &stages.apply},
                                                                     {"total", &stages.total}};
  for (const auto& [name, values] : rows)
    std::printf("  %-8s %10.1f %10.1f %10.1f\n", name, quantile(*values, 0.5), quantile(*values, 0.95),
                values->empty() ? 0.0 : *std::max_element(values->begin(), values->end()));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Measures the time from a demand change on the host to the guest's applied preferred mask, for folds and "
      "unfolds, split into report, decide, send and apply (ms: median, p95, max). Needs root for the VMs' cpuset and "
      "CPU groups.",
      "vcpufold-bench-latency"};
  FleetBinaries binaries{VCPUFOLD_EMULATED_VM, VCPUFOLD_AGENT_BINARY, VCPUFOLD_HOSTD_BINARY};
  std::string work = "/var/tmp/vcpufold-bench/latency";
  unsigned repetitions = 30, tickMs = 1000;
  app.add_option("--work", work, "run directory (logs)")->capture_default_str();
  app.add_option("--repetitions", repetitions, "fold and unfold changes to time (each)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--tick-ms", tickMs, "hostd's tick and the agents' interval")
      ->capture_default_str()
      ->check(CLI::Range(100, 60000));
  CLI11_PARSE(app, argc, argv);

  std::vector<VmSpec> vms(2);
  vms[0].name = "vm-a";
  vms[0].workload = "compute";
  vms[0].schedule = Schedule{Schedule::Kind::Constant, 2};
  vms[1].name = "vm-b";
  vms[1].workload = "compute";
  vms[1].schedule = Schedule{Schedule::Kind::Constant, 0};
  const unsigned folded = 1;  // vm-a's share against a busy vm-b on 2 pCPUs, rounded up
  std::unique_ptr<Fleet> started;
  try {
    started = std::make_unique<Fleet>(binaries, work, vms, FleetOptions{tickMs, 2});
    started->startAgents();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "vcpufold-bench-latency: %s\n", error.what());
    return 1;
  }
  Fleet& fleet = *started;
  fleet.startHostd();
  const auto countOfA = [&] {
    const auto timeline = readTimeline(fleet.file(0, ".preferred.log"));
    return timeline.empty() ? 0u : timeline.back().second;
  };
  const auto waitFor = [&](auto wanted, unsigned ticks) {
    return vcpufold::testing::waitUntil([&] { return wanted(countOfA()); }, static_cast<int>(ticks * tickMs), 5);
  };
  const auto isFolded = [&](unsigned count) { return count == folded; };
  const auto isUnfolded = [&](unsigned count) { return count > folded; };
  std::this_thread::sleep_for(std::chrono::milliseconds(4 * tickMs));  // hinted, acknowledged, statuses in
  std::mt19937 random(1);
  unsigned foldsSeen = 0, unfoldsSeen = 0;
  for (unsigned round = 0; round < repetitions; ++round) {
    waitFor(isUnfolded, 10);
    // Each change at a random point of the tick, as demand changes come.
    std::this_thread::sleep_for(std::chrono::milliseconds(200 + random() % tickMs));
    fleet.setTasks(1, 4);
    if (waitFor(isFolded, 10)) ++foldsSeen;
    std::this_thread::sleep_for(std::chrono::milliseconds(200 + random() % tickMs));
    fleet.setTasks(1, 0);
    if (waitFor(isUnfolded, 10)) ++unfoldsSeen;
  }
  fleet.stop();

  const auto decisions = readDecisions(fleet.directory() + "/hostd.log");
  const auto hints = readAgentHints(fleet.file(0, ".agent.log"));
  const auto reports = readEarlyStatuses(fleet.file(1, ".agent.log"));
  Stages fold, unfold;
  const auto changes = readTimeline(fleet.file(1, ".tasks.log"));
  for (std::size_t index = 1; index < changes.size(); ++index) {  // the first line is the VM's start
    const auto& [at, tasks] = changes[index];
    const bool wakes = tasks > 0;
    const double changeMs = static_cast<double>(at) / 1e6;
    // vm-a's first hint after the change that folds (or unfolds) it.
    const auto hint = std::find_if(hints.begin(), hints.end(), [&](const AgentHint& h) {
      return h.receivedMs > changeMs && (wakes ? h.vcpus == folded : h.vcpus > folded);
    });
    if (hint == hints.end()) continue;
    // The decision that sent it: the last one that started before it arrived.
    const auto next =
        std::find_if(decisions.begin(), decisions.end(), [&](const Decision& d) { return d.atMs > hint->receivedMs; });
    if (next == decisions.begin()) continue;
    const double decidedMs = std::prev(next)->atMs;
    const auto report = std::find_if(reports.begin(), reports.end(), [&](double t) { return t > changeMs; });
    const bool reported = report != reports.end() && *report <= decidedMs;
    Stages& stages = wakes ? fold : unfold;
    if (reported) {
      stages.report.push_back(*report - changeMs);
      stages.decide.push_back(decidedMs - *report);
    }
    stages.send.push_back(hint->receivedMs - decidedMs);
    stages.apply.push_back(hint->applyMs);
    stages.total.push_back(hint->receivedMs + hint->applyMs - changeMs);
  }
  std::printf(
      "demand change to applied mask, ms; hostd tick %u ms, unfold delay 1000 ms (hostd's defaults); "
      "%u folds and %u unfolds seen; logs in %s\n",
      tickMs, foldsSeen, unfoldsSeen, work.c_str());
  printStages("fold", fold, repetitions);
  printStages("unfold", unfold, repetitions);
  std::printf(
      "report and decide are timed only where the change was reported early (else the decision was a tick's)\n");
  return fold.total.empty() || unfold.total.empty() ? 1 : 0;
}
