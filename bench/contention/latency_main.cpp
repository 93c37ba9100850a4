// vcpufold-bench-latency: how long a demand change takes to reach a guest's
// preferred mask, split into its stages. Two emulated VMs with real agents
// and a real hostd: vm-a runs 2 tasks alone (no contention, unfolded), then
// vm-b wakes with 4 and the pool is contended, so hostd folds vm-a at once.
// Repeated; the stages come from the monotonic times hostd and the agent log
// at debug level and the VMs' own timelines.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <regex>
#include <thread>

#include "fleet.h"

namespace {

using namespace vcpufold::bench;

struct TickLine {
  double startMs = 0, sampleMs = 0, decideMs = 0;
  bool foldedA = false;  // this tick changed vm-a's hint to the fold target
};

struct AgentHint {
  double receivedMs = 0, applyMs = 0;
  unsigned vcpus = 0;
};

std::vector<TickLine> readTicks(const std::string& path, unsigned target) {
  // hostd's debug line per decision: when it was taken, how old the inventory
  // snapshot was (taken on the inventory thread, then handed over), and how
  // long deciding and queueing the hints took.
  const std::regex tick(
      R"(decision \d+ at ([0-9.]+) ms: snapshot \d+ \(([0-9.]+) ms old\), decide and queue ([0-9.]+) ms)");
  const std::regex hint("vm-a: hint \\S+ -> " + std::to_string(target) + ":");
  std::vector<TickLine> ticks;
  std::ifstream file(path);
  bool pendingFold = false;
  for (std::string line; std::getline(file, line);) {
    std::smatch match;
    if (std::regex_search(line, hint)) pendingFold = true;
    if (std::regex_search(line, match, tick)) {
      // start = when sampling ended; sample = the handover to the control thread.
      const double decidedAt = std::stod(match[1]), age = std::stod(match[2]);
      ticks.push_back({decidedAt - age, age, std::stod(match[3]), pendingFold});
      pendingFold = false;
    }
  }
  return ticks;
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

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Measures the time from a demand change on the host to the guest's applied preferred mask, split "
      "into sample (waiting for hostd's tick, then reading), decide, send and apply. Needs root for the "
      "VMs' CPU groups.",
      "vcpufold-bench-latency"};
  FleetBinaries binaries{VCPUFOLD_EMULATED_VM, VCPUFOLD_AGENT_BINARY, VCPUFOLD_HOSTD_BINARY};
  std::string work = "/var/tmp/vcpufold-bench/latency";
  unsigned repetitions = 5, tickMs = 1000;
  app.add_option("--work", work, "run directory (logs)")->capture_default_str();
  app.add_option("--repetitions", repetitions, "demand changes to time")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
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
  const unsigned target = 1;  // vm-a's fair share of 2 pCPUs against vm-b, rounded up
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
  const auto waitFor = [&](unsigned count, unsigned ticks) {
    return vcpufold::testing::waitUntil([&] { return countOfA() == count; }, static_cast<int>(ticks * tickMs), 5);
  };
  std::this_thread::sleep_for(std::chrono::milliseconds(3 * tickMs));
  unsigned folded = 0;
  for (unsigned round = 0; round < repetitions; ++round) {
    waitFor(4, 10);
    // Start at a random point of the tick, as demand changes do.
    std::this_thread::sleep_for(std::chrono::milliseconds(std::rand() % static_cast<int>(tickMs)));
    fleet.setTasks(1, 4);
    if (waitFor(target, 10)) ++folded;
    fleet.setTasks(1, 0);
  }
  waitFor(4, 10);
  fleet.stop();

  const auto ticks = readTicks(fleet.directory() + "/hostd.log", target);
  const auto hints = readAgentHints(fleet.file(0, ".agent.log"));
  const auto preferred = readTimeline(fleet.file(0, ".preferred.log"));
  std::vector<double> samples, decides, sends, applies, totals;
  std::printf("%-6s %12s %10s %9s %9s %9s %12s\n", "change", "sample(ms)", "decide", "send", "apply", "total",
              "VM saw (ms)");
  unsigned index = 0;
  for (const auto& [at, tasks] : readTimeline(fleet.file(1, ".tasks.log"))) {
    if (tasks != 4) continue;
    const double changeMs = static_cast<double>(at) / 1e6;
    const auto tick =
        std::find_if(ticks.begin(), ticks.end(), [&](const TickLine& t) { return t.foldedA && t.startMs > changeMs; });
    if (tick == ticks.end()) continue;
    const double decidedMs = tick->startMs + tick->sampleMs + tick->decideMs;
    const auto hint = std::find_if(hints.begin(), hints.end(), [&](const AgentHint& h) {
      return h.vcpus == target && h.receivedMs >= tick->startMs;
    });
    if (hint == hints.end()) continue;
    const auto seen = std::find_if(preferred.begin(), preferred.end(), [&](const auto& entry) {
      return static_cast<double>(entry.first) / 1e6 > changeMs && entry.second == target;
    });
    const double sample = tick->startMs + tick->sampleMs - changeMs;
    const double send = hint->receivedMs - decidedMs;
    const double total = hint->receivedMs + hint->applyMs - changeMs;
    samples.push_back(sample);
    decides.push_back(tick->decideMs);
    sends.push_back(send);
    applies.push_back(hint->applyMs);
    totals.push_back(total);
    std::printf("%-6u %12.1f %10.3f %9.3f %9.3f %9.1f %12.1f\n", ++index, sample, tick->decideMs, send, hint->applyMs,
                total, seen == preferred.end() ? -1.0 : static_cast<double>(seen->first) / 1e6 - changeMs);
  }
  std::printf("%-6s %12.1f %10.3f %9.3f %9.3f %9.1f\n", "median", median(samples), median(decides), median(sends),
              median(applies), median(totals));
  std::printf("tick %u ms; %u of %u changes folded vm-a; sample includes the wait for the next tick; logs in %s\n",
              tickMs, folded, repetitions, work.c_str());
  return totals.empty() ? 1 : 0;
}
