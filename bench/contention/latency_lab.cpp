// SPDX-License-Identifier: GPL-2.0-or-later
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <regex>
#include <stdexcept>
#include <thread>

#include "bench_text.h"
#include "guest_control.h"
#include "lab_domains.h"
#include "latency_runs.h"
#include "latency_stages.h"
#include "qemu_guest.h"

namespace vcpufold::bench {

namespace {

const std::string kGuests = VCPUFOLD_SOURCE_DIR "/tests/lab/libvirt/guests.sh";
const std::string kMeasured = "vcpufold-bench-lat-a";   // runs 2 tasks throughout; folds and unfolds
const std::string kNeighbour = "vcpufold-bench-lat-b";  // idle, then 4 tasks, then idle, ...

double hostNowMs() { return static_cast<double>(monotonicNowNs()) / 1e6; }

// "now at 123 nsecs" (/proc/timer_list, the guest's CLOCK_MONOTONIC) in ms.
std::optional<double> guestClockMs(const std::string& output) {
  static const std::regex now(R"(now at (\d+) nsecs)");
  std::smatch match;
  if (!std::regex_search(output, match, now)) return std::nullopt;
  return std::stod(match[1]) / 1e6;
}

// Lab domains are libvirtd's children, not ours: they go when the run ends,
// however it ends short of SIGKILL (then the next run's start removes them).
class LabGuests {
 public:
  explicit LabGuests(const std::string& agentBinary) {
    testing::destroyStaleLabDomains();
    const std::string started = testing::runShell("GUEST_BINS='" + agentBinary + "' " + kGuests +
                                                  " start latency-lab " + kMeasured + " " + kNeighbour + " 2>&1");
    if (started.find("error") != std::string::npos) {
      stop();
      throw std::runtime_error("the lab guests did not start: " + started);
    }
  }
  ~LabGuests() { stop(); }
  LabGuests(const LabGuests&) = delete;
  LabGuests& operator=(const LabGuests&) = delete;

 private:
  static void stop() { testing::runShell(kGuests + " stop " + kMeasured + " " + kNeighbour); }
};

class LabGuest {
 public:
  explicit LabGuest(const std::string& name)
      : name_(name), control_(testing::labDirectory() + "/libvirt/" + name + ".ctl.sock") {}

  std::string run(const std::string& command, int timeoutMs = 60'000) {
    const auto result = control_.run(command, timeoutMs);
    if (!result) throw std::runtime_error(name_ + " did not answer \"" + command + "\"");
    return result->output;
  }
  void waitReady() {
    if (!control_.waitReady(180'000)) throw std::runtime_error(name_ + " did not boot within 3 minutes");
  }
  // The guest's CLOCK_MONOTONIC minus the host's, ms, from the quickest of a
  // few round trips; the true offset is within half that round trip.
  struct ClockOffset {
    double guestMinusHostMs = 0, roundTripMs = 0;
  };
  ClockOffset clockOffset() {
    ClockOffset best{0, 1e9};
    for (int sample = 0; sample < 12; ++sample) {
      const double sentMs = hostNowMs();
      const auto guestMs = guestClockMs(run("{ read -r _; read -r _; read -r now; } </proc/timer_list; echo \"$now\""));
      const double answeredMs = hostNowMs();
      if (!guestMs) throw std::runtime_error(name_ + ": no \"now at\" line in /proc/timer_list");
      if (answeredMs - sentMs < best.roundTripMs) best = {*guestMs - (sentMs + answeredMs) / 2, answeredMs - sentMs};
    }
    return best;
  }
  // Sets the guest's CPU-bound tasks; the guest's clock when they were started.
  double setTasks(unsigned tasks) {
    const auto output = run("sh /lab/set-tasks " + std::to_string(tasks));
    const auto at = guestClockMs(output);
    if (!at) throw std::runtime_error(name_ + ": set-tasks said " + output);
    return *at;
  }

 private:
  std::string name_;
  testing::GuestControl control_;
};

// The vCPUs of the last hint hostd logged for `vm` ("VM: hint 4 -> 1: ..."), or 0.
unsigned lastHint(const std::string& hostdLog, const std::string& vm) {
  const std::regex change(vm + R"(: hint \S+ -> (\d+): )");
  unsigned last = 0;
  std::ifstream file(hostdLog);
  for (std::string line; std::getline(file, line);) {
    std::smatch match;
    if (std::regex_search(line, match, change)) last = static_cast<unsigned>(std::stoul(match[1]));
  }
  return last;
}

// The agent's debug lines the stages come from, copied to the host.
std::string copyAgentLog(LabGuest& guest, const std::string& path) {
  writeWholeFile(path, guest.run("grep -E 'received at|status sent now' /tmp/lab/agent.log"));
  return path;
}

}  // namespace

LatencyTable measureLabLatency(const FleetBinaries& binaries, const LatencyOptions& options) {
  if (auto reason = testing::labUnavailableReason()) throw std::runtime_error("no TCG lab here: " + *reason);
  if (std::system("command -v libvirtd >/dev/null 2>&1") != 0)
    throw std::runtime_error("no TCG lab here: libvirtd is not installed (scripts/install-deps.sh installs it)");
  const unsigned tickMs = options.tickMs;
  const unsigned folded = 1;  // the measured guest's share against a busy neighbour on 2 pCPUs, rounded up
  // Only this run's own files are replaced: --work may name any directory.
  std::filesystem::create_directories(options.work);
  const std::string hostdLog = options.work + "/hostd.log";
  for (const std::string& stale :
       {hostdLog, options.work + "/hostd.sock", options.work + "/" + kMeasured + ".agent.log",
        options.work + "/" + kNeighbour + ".agent.log", options.work + "/" + kNeighbour + ".tasks.log"})
    std::filesystem::remove(stale);

  LabGuests guests(binaries.agent);
  LabGuest measured(kMeasured), neighbour(kNeighbour);
  measured.waitReady();
  neighbour.waitReady();
  const std::string kernel = measured.run("uname -r");
  measured.setTasks(2);
  const auto measuredClock = measured.clockOffset(), neighbourClock = neighbour.clockOffset();

  writeWholeFile(options.work + "/hostd.toml", "[hostd]\ninterval_ms = " + std::to_string(tickMs) +
                                                   "\nlog_level = \"debug\"\n[metrics]\naddress = \"\"\n"
                                                   "[control]\nsocket = \"" +
                                                   options.work + "/hostd.sock\"\n");
  auto hostd = std::make_unique<testing::ChildProcess>(
      binaries.hostd, std::vector<std::string>{"--config", options.work + "/hostd.toml"}, hostdLog);
  const auto waitFor = [&](auto wanted, unsigned ticks) {
    return testing::waitUntil([&] { return wanted(lastHint(hostdLog, kMeasured)); }, static_cast<int>(ticks * tickMs),
                              100);
  };
  const auto isFolded = [&](unsigned count) { return count == folded; };
  const auto isUnfolded = [&](unsigned count) { return count > folded; };
  std::vector<DemandChange> changes;
  std::mt19937 random(1);
  unsigned foldsSeen = 0, unfoldsSeen = 0;
  if (!waitFor(isUnfolded, 30)) throw std::runtime_error("hostd never hinted " + kMeasured + "; see " + hostdLog);
  for (unsigned round = 0; round < options.repetitions; ++round) {
    waitFor(isUnfolded, 10);
    // Each change at a random point of the tick, as demand changes come.
    std::this_thread::sleep_for(std::chrono::milliseconds(500 + random() % tickMs));
    changes.push_back({neighbour.setTasks(4), true});  // guest time, mapped below
    if (waitFor(isFolded, 10)) ++foldsSeen;
    std::this_thread::sleep_for(std::chrono::milliseconds(500 + random() % tickMs));
    changes.push_back({neighbour.setTasks(0), false});
    if (waitFor(isUnfolded, 10)) ++unfoldsSeen;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(tickMs));  // the last hint applied
  hostd.reset();
  const auto measuredAfter = measured.clockOffset(), neighbourAfter = neighbour.clockOffset();
  std::string changeLog;  // kept beside the other logs: the neighbour's clock, ms
  for (const auto& change : changes) changeLog += format("%.3f", change.atMs) + (change.wakes ? " 4\n" : " 0\n");
  writeWholeFile(options.work + "/" + kNeighbour + ".tasks.log", changeLog);

  // Guest times on the host's clock: the control port's round trips bound
  // each guest's offset; the quickest lease renewal pins it down.
  const auto decisions = readDecisionTimes(hostdLog), ticks = readTickDecisionTimes(hostdLog);
  auto hints = readAgentHints(copyAgentLog(measured, options.work + "/" + kMeasured + ".agent.log"));
  const std::string neighbourLog = copyAgentLog(neighbour, options.work + "/" + kNeighbour + ".agent.log");
  auto reports = readEarlyStatusTimes(neighbourLog);
  std::string clockNote;
  const auto offsetOf = [&](const std::string& name, const LabGuest::ClockOffset& before,
                            const LabGuest::ClockOffset& after, const std::vector<AgentHint>& guestHints) {
    const double coarse = (before.guestMinusHostMs + after.guestMinusHostMs) / 2;
    const double uncertainty = std::max(before.roundTripMs, after.roundTripMs) / 2 +
                               std::abs(after.guestMinusHostMs - before.guestMinusHostMs) / 2;
    const auto refined = offsetFromRenewals(ticks, decisions, guestHints, coarse, uncertainty);
    clockNote += name + ": " +
                 (refined ? "the quickest lease renewal, " + format("%+.1f", *refined - coarse) +
                                " ms from the control port's estimate (+/-" + format("%.1f", uncertainty) + " ms)"
                          : "no lease renewal qualified; the control port's estimate, +/-" +
                                format("%.1f", uncertainty) + " ms") +
                 "\n";
    return refined.value_or(coarse);
  };
  const double measuredOffset = offsetOf(kMeasured, measuredClock, measuredAfter, hints);
  const double neighbourOffset = offsetOf(kNeighbour, neighbourClock, neighbourAfter, readAgentHints(neighbourLog));
  for (auto& hint : hints) hint.receivedMs -= measuredOffset;
  for (auto& report : reports) report -= neighbourOffset;
  for (auto& change : changes) change.atMs -= neighbourOffset;
  const auto split = splitIntoStages(changes, decisions, hints, reports, folded);

  LatencyTable table;
  table.text = "TCG lab, 2 guests x 4 vCPUs under libvirt (guest kernel " + kernel.substr(0, kernel.find('\n')) +
               ", real vcpufold-agent): demand change to applied mask, ms; hostd tick " + std::to_string(tickMs) +
               " ms, unfold delay 1000 ms; " + std::to_string(foldsSeen) + " folds and " + std::to_string(unfoldsSeen) +
               " unfolds seen; logs in " + options.work + "\n" + "guest clocks on the host's, by\n" + clockNote +
               describeStages("fold", split.fold, options.repetitions) +
               describeStages("unfold", split.unfold, options.repetitions);
  table.bothDirectionsTimed = !split.fold.total.empty() && !split.unfold.total.empty();
  return table;
}

}  // namespace vcpufold::bench
