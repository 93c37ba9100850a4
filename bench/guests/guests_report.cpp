// SPDX-License-Identifier: GPL-2.0-or-later
#include "guests_report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "bench_text.h"
#include "fold_without_vcpufold.h"
#include "latency_stages.h"

namespace vcpufold::bench {

namespace {

std::vector<double> throughputs(const std::vector<GuestSample>& samples, const std::string& actuator,
                                const std::string& workload, GuestMode mode) {
  std::vector<double> values;
  for (const auto& sample : samples)
    if (sample.actuator == actuator && sample.workload == workload && sample.mode == mode)
      values.push_back(sample.throughput());
  return values;
}

// Mode a's and mode b's throughputs of the repetitions that measured both, in
// repetition order: element i of each is one repetition.
std::pair<std::vector<double>, std::vector<double>> pairedThroughputs(const std::vector<GuestSample>& samples,
                                                                      const std::string& actuator,
                                                                      const std::string& workload, GuestMode a,
                                                                      GuestMode b) {
  std::map<unsigned, std::pair<double, double>> byRepetition;
  std::map<unsigned, int> seen;
  for (const auto& sample : samples) {
    if (sample.actuator != actuator || sample.workload != workload) continue;
    if (sample.mode == a) {
      byRepetition[sample.repetition].first = sample.throughput();
      seen[sample.repetition] |= 1;
    }
    if (sample.mode == b) {
      byRepetition[sample.repetition].second = sample.throughput();
      seen[sample.repetition] |= 2;
    }
  }
  std::pair<std::vector<double>, std::vector<double>> paired;
  for (const auto& [repetition, values] : byRepetition)
    if (seen[repetition] == 3) {
      paired.first.push_back(values.first);
      paired.second.push_back(values.second);
    }
  return paired;
}

std::string rateText(const Estimate& estimate) {
  if (estimate.samples == 0) return "-";
  if (estimate.samples < 2) return format("%.3f", estimate.median);
  return format("%.3f", estimate.median) + " [" + format("%.3f", estimate.low) + ", " + format("%.3f", estimate.high) +
         "]";
}

bool ran(const GuestsReportInput& input, const ActuatorRun& actuator, const std::string& workload) {
  return actuator.skipped.empty() &&
         !throughputs(input.samples, actuator.actuator, workload, GuestMode::Unfolded).empty();
}

std::string emulatedMode(GuestMode mode) { return mode == GuestMode::Fixed ? "static-fair" : guestModeName(mode); }

}  // namespace

double GuestSample::throughput() const {
  double total = 0;
  for (const double seconds : unitSeconds)
    if (seconds > 0) total += 1 / seconds;
  return total;
}

std::vector<EmulatedSample> readEmulatedResults(const std::string& csv) {
  // scenario,mode,repetition,vm,window_s,ops_per_s,...: one row per VM.
  std::map<std::tuple<std::string, std::string, unsigned>, double> totals;
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);  // the header
  while (std::getline(lines, line)) {
    std::vector<std::string> fields;
    std::istringstream row(line);
    for (std::string field; std::getline(row, field, ',');) fields.push_back(field);
    if (fields.size() < 6 || fields[0].rfind("steady/", 0) != 0) continue;
    try {
      totals[{fields[0].substr(7), fields[1], static_cast<unsigned>(std::stoul(fields[2]))}] += std::stod(fields[5]);
    } catch (const std::exception&) {
      continue;  // not a number: not a row of results
    }
  }
  std::vector<EmulatedSample> samples;
  for (const auto& [key, total] : totals)
    samples.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), total});
  return samples;
}

std::vector<double> emulatedThroughputs(const std::vector<EmulatedSample>& samples, const std::string& workload,
                                        const std::string& mode) {
  std::vector<double> values;
  for (const auto& sample : samples)
    if (sample.workload == workload && sample.mode == mode) values.push_back(sample.opsPerSecond);
  return values;
}

unsigned hintChangesAfterSettling(const std::string& hostdLog) {
  // "info: NAME: hint 4 -> 1: reason": both sides numbers ("none" is no hint).
  const auto number = [](const std::string& text, std::size_t& at) {
    const std::size_t start = at;
    while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) ++at;
    return at > start;
  };
  std::set<std::string> settled;
  unsigned changes = 0;
  std::istringstream lines(hostdLog);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t level = line.find(": ");
    const std::size_t hint = line.find(": hint ");
    if (level == std::string::npos || hint == std::string::npos || hint <= level) continue;
    std::size_t at = hint + 7;
    if (!number(line, at) || line.compare(at, 4, " -> ") != 0) continue;
    at += 4;
    if (!number(line, at) || line.compare(at, 2, ": ") != 0) continue;
    if (!settled.insert(line.substr(level + 2, hint - level - 2)).second) ++changes;
  }
  return changes;
}

unsigned hintChangesWithin(const std::string& agentLog, double fromSeconds, double toSeconds) {
  std::optional<unsigned> previous;
  unsigned changes = 0;
  for (const AgentHint& hint : parseAgentHints(agentLog)) {
    const double seconds = hint.receivedMs / 1000;
    if (previous && *previous != hint.vcpus && seconds >= fromSeconds && seconds <= toSeconds) ++changes;
    previous = hint.vcpus;
  }
  return changes;
}

std::vector<double> lateAgentLoopsMs(const std::string& agentLog) {
  static constexpr std::string_view kLate = "the agent's loop ran ";
  std::vector<double> late;
  std::istringstream lines(agentLog);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t at = line.find(kLate);
    if (at == std::string::npos) continue;
    const std::string rest = line.substr(at + kLate.size());
    std::size_t used = 0;
    double ms = 0;
    try {
      ms = std::stod(rest, &used);
    } catch (const std::exception&) {
      continue;
    }
    if (rest.compare(used, 18, " ms after it was d") == 0) late.push_back(ms);
  }
  return late;
}

std::string guestsCsv(const std::vector<GuestSample>& samples) {
  std::string out =
      "actuator,workload,mode,repetition,guest,unit_s,units_per_s_all_guests,overdue_acks,hint_changes,minutes,"
      "steady_hint_changes,steady_minutes,host_wait_credits\n";
  for (const auto& sample : samples)
    for (std::size_t guest = 0; guest < sample.unitSeconds.size(); ++guest)
      out += sample.actuator + "," + sample.workload + "," + guestModeName(sample.mode) + "," +
             std::to_string(sample.repetition) + "," + std::to_string(guest + 1) + "," +
             format("%.3f", sample.unitSeconds[guest]) + "," + format("%.5f", sample.throughput()) + "," +
             std::to_string(sample.overdueAcks) + "," + std::to_string(sample.hintChanges) + "," +
             format("%.2f", sample.minutes) + "," + std::to_string(sample.steadyHintChanges) + "," +
             format("%.3f", sample.steadyMinutes) + "," + std::to_string(sample.hostWaitCredits) + "\n";
  return out;
}

Estimate guestRatio(const std::vector<GuestSample>& samples, const std::string& actuator, const std::string& workload,
                    GuestMode a, GuestMode b) {
  const auto [top, bottom] = pairedThroughputs(samples, actuator, workload, a, b);
  return estimatePairedRatio(top, bottom);
}

Estimate guestRatioUnpaired(const std::vector<GuestSample>& samples, const std::string& actuator,
                            const std::string& workload, GuestMode a, GuestMode b) {
  return estimateRatio(throughputs(samples, actuator, workload, a), throughputs(samples, actuator, workload, b));
}

std::string renderGuestsReport(const GuestsReportInput& input) {
  std::ostringstream out;
  out << "Machine: " << input.machine << "; guests are TCG (`thread=multi`: every vCPU a host thread)  \n";
  out << "Commit: " << input.commit << ", " << input.date << "; the run took " << format("%.0f", input.minutes)
      << " min, " << input.repetitions << " repetitions of every mode, modes interleaved.  \n";
  out << "Reproduce: `" << input.command << "`\n\n";
  out << input.guests << " guests x " << input.vcpus << " vCPUs on " << input.pcpus << " pCPUs, under libvirt"
      << (input.guestArgs.empty() ? "" : " (guest kernel command line + `" + input.guestArgs + "`)")
      << "; each guest runs the workload at once with the others. A guest's figure is the "
         "time of its second unit of work (the first warms TCG's translation up and covers the mode's start); every "
         "guest keeps working until all have ended their second, so each is measured under the full load. "
         "Throughput is units per second summed over the guests. A ratio is paired: each repetition runs every "
         "mode of a workload back to back, the ratio is the median of the repetitions' own ratios and its 95% "
         "interval comes from resampling repetitions, so the machine's drift between repetitions cancels "
         "instead of widening it; the same ratios unpaired (medians of each mode, both sides resampled) follow "
         "each table. Modes: **unfolded** (no hostd, no agent), **vcpufold** (the real hostd at its "
         "defaults and the real agents), **fixed** (every guest's policy `fixed` at "
      << input.fixedVcpus << " vCPU" << (input.fixedVcpus == 1 ? "" : "s")
      << ", its equal share of the pCPUs rounded up, through `virsh metadata`, applied by the same hostd and "
         "agents).\n\n";

  for (const auto& actuator : input.actuators) {
    out << "##### Actuator `" << actuator.actuator << "`"
        << (actuator.kernel.empty() ? "" : " (guest kernel " + actuator.kernel + ")") << "\n\n";
    if (!actuator.skipped.empty()) {
      out << "Not run: " << actuator.skipped << "\n\n";
      continue;
    }
    out << "| workload | unfolded (units/s) | vcpufold | fixed | vcpufold / unfolded | vcpufold / fixed | "
           "fixed / unfolded |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    for (const auto& workload : input.workloads) {
      if (!ran(input, actuator, workload)) continue;
      out << "| " << workload;
      for (const GuestMode mode : kGuestModes)
        out << " | " << rateText(estimateMedian(throughputs(input.samples, actuator.actuator, workload, mode)));
      out << " | "
          << ratioText(guestRatio(input.samples, actuator.actuator, workload, GuestMode::Vcpufold, GuestMode::Unfolded))
          << " | "
          << ratioText(guestRatio(input.samples, actuator.actuator, workload, GuestMode::Vcpufold, GuestMode::Fixed))
          << " | "
          << ratioText(guestRatio(input.samples, actuator.actuator, workload, GuestMode::Fixed, GuestMode::Unfolded))
          << " |\n";
    }
    out << "\nUnpaired, for comparison:\n\n| workload | vcpufold / unfolded | vcpufold / fixed | fixed / unfolded |\n"
           "| --- | ---: | ---: | ---: |\n";
    for (const auto& workload : input.workloads) {
      if (!ran(input, actuator, workload)) continue;
      out << "| " << workload;
      for (const auto& [a, b] : {std::pair{GuestMode::Vcpufold, GuestMode::Unfolded},
                                 std::pair{GuestMode::Vcpufold, GuestMode::Fixed},
                                 std::pair{GuestMode::Fixed, GuestMode::Unfolded}})
        out << " | " << ratioText(guestRatioUnpaired(input.samples, actuator.actuator, workload, a, b));
      out << " |\n";
    }
    out << "\n";
  }

  // Overdue acknowledgements: an agent that did not answer a hint within
  // hostd's lease (its guest is then hinted all its vCPUs until it does).
  // Hint changes, counted twice: hostd's after each guest's first (settling
  // steps included), and the agents' during their measured unit, when every
  // guest is busy and the first fold long done: the steady time, where a
  // steady controller changes nothing (the emulated bench's target: 0/min).
  out << "##### Overdue acknowledgements and hint changes\n\nIn the measurements with hostd (vcpufold and fixed): "
         "hostd's `hint seq N not acknowledged in` lines; the hints it awaited longer because the host had kept "
         "the VM's QEMU main loop waiting to run (`the host kept the guest's side waiting` lines: time the host, "
         "not the agent, used); its preferred-count changes after each guest's first one, "
         "per minute of hostd's run (settling steps included: a second step when a neighbour's report waits for "
         "the host's evidence, and the pairs around an overdue acknowledgement); and the changes of the count the "
         "agents received during their measured unit (the second; every guest busy and the first fold done: "
         "steady time, whose target is 0 per minute), per minute of that unit, summed over guests:\n\n"
         "| actuator | mode | measurements with an overdue ack | episodes | hints awaited longer for the host's wait | "
         "measurements with a further hint change | "
         "changes per minute: median, max | measurements with a change in steady time | steady changes per minute: "
         "median, max |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  for (const auto& actuator : input.actuators) {
    if (!actuator.skipped.empty()) continue;
    for (const GuestMode mode : {GuestMode::Vcpufold, GuestMode::Fixed}) {
      unsigned measurements = 0, with = 0, episodes = 0, credited = 0, changed = 0, steadyChanged = 0;
      std::vector<double> perMinute, steadyPerMinute;
      for (const auto& sample : input.samples)
        if (sample.actuator == actuator.actuator && sample.mode == mode) {
          ++measurements;
          with += sample.overdueAcks > 0;
          episodes += sample.overdueAcks;
          credited += sample.hostWaitCredits;
          changed += sample.hintChanges > 0;
          perMinute.push_back(sample.minutes > 0 ? sample.hintChanges / sample.minutes : 0.0);
          steadyChanged += sample.steadyHintChanges > 0;
          // A measurement whose units' windows were not read has no steady time: not a 0.
          if (sample.steadyMinutes > 0) steadyPerMinute.push_back(sample.steadyHintChanges / sample.steadyMinutes);
        }
      if (measurements == 0) continue;
      out << "| `" << actuator.actuator << "` | " << guestModeName(mode) << " | " << with << " of " << measurements
          << " | " << episodes << " | " << credited << " | " << changed << " of " << measurements << " | "
          << format("%.1f", median(perMinute)) << ", "
          << format("%.1f", *std::max_element(perMinute.begin(), perMinute.end())) << " | " << steadyChanged << " of "
          << measurements << " | "
          << (steadyPerMinute.empty()
                  ? std::string("no steady time")
                  : format("%.1f", median(steadyPerMinute)) + ", " +
                        format("%.1f", *std::max_element(steadyPerMinute.begin(), steadyPerMinute.end())))
          << " |\n";
    }
  }
  out << "\n";

  std::vector<PairedMeasurement> measurements;
  for (const auto& sample : input.samples)
    measurements.push_back({sample.actuator, sample.workload, guestModeName(sample.mode),
                            std::to_string(sample.repetition), sample.throughput()});
  const std::string fold = renderFoldWithoutVcpufold(foldWithoutVcpufold(measurements));
  if (!fold.empty())
    out << "##### The fold without vcpufold\n\nThe `compute-folded` workload is the compute unit with its loops "
           "folded into a cpuset of vCPU 0 by the workload itself, with no agent and no hostd (in mode "
           "unfolded), and `compute-folded-N` the same onto vCPUs 0 to N-1; in mode fixed vcpufold's agents and hostd "
           "run beside it, folded to the same vCPU. Paired "
           "per repetition across the workloads:\n\n"
        << fold << "\n";

  const std::string where = renderWhereTable(input.where, input.fixedVcpus);
  if (!where.empty())
    out << "##### What ran where\n\nDuring every measurement each guest's `/proc/stat`, `/proc/interrupts`, "
           "`/proc/softirqs` and threads were read when the workload started and when the measured units "
           "ended; the rows are what ran on the vCPUs a folded guest does not prefer (raw: `where.txt`).\n\n"
        << where;

  out << "##### Targets\n\n| target | measured | verdict |\n| --- | --- | --- |\n";
  const auto target = [&](const std::string& actuator, const std::string& workload, GuestMode a, GuestMode b,
                          double at) {
    const Estimate ratio = guestRatio(input.samples, actuator, workload, a, b);
    if (ratio.samples == 0) return;
    out << "| `" << actuator << "` " << workload << ": " << guestModeName(a) << " / " << guestModeName(b)
        << " >= " << format("%.2f", at) << " | " << ratioText(ratio) << " | " << verdictName(judgeAtLeast(ratio, at))
        << " |\n";
  };
  for (const auto& actuator : input.actuators) {
    const GuestActuator* known = findGuestActuator(actuator.actuator);
    if (!actuator.skipped.empty() || (known && !known->targeted)) continue;
    for (const auto& workload : input.workloads) {
      if (workload.rfind("hackbench", 0) == 0) {
        target(actuator.actuator, workload, GuestMode::Vcpufold, GuestMode::Unfolded, 1.2);
        target(actuator.actuator, workload, GuestMode::Vcpufold, GuestMode::Fixed, 0.95);
      } else if (workload == "compute") {
        target(actuator.actuator, workload, GuestMode::Vcpufold, GuestMode::Unfolded, 0.95);
      }
    }
    // Steadiness, as the emulated bench judges it: any change in steady time misses.
    std::vector<double> steady;
    for (const auto& sample : input.samples)
      if (sample.actuator == actuator.actuator && sample.mode == GuestMode::Vcpufold && sample.steadyMinutes > 0)
        steady.push_back(sample.steadyHintChanges / sample.steadyMinutes);
    if (!steady.empty()) {
      const double worst = *std::max_element(steady.begin(), steady.end());
      out << "| `" << actuator.actuator << "`: 0 preferred-count changes per minute in steady time (vcpufold) | median "
          << format("%.1f", median(steady)) << ", max " << format("%.1f", worst) << " /min | "
          << verdictName(worst == 0 ? Verdict::Met : Verdict::Missed) << " |\n";
    }
  }
  out << "\n";

  out << "##### The emulated model beside the real guests\n\n" << input.emulatedNote << "\n\n";
  if (!input.emulated.empty()) {
    out << "| real workload (actuator) | emulated workload | ratio | real | emulated | real / emulated |\n"
           "| --- | --- | --- | ---: | ---: | ---: |\n";
    for (const auto& actuator : input.actuators) {
      for (const auto& workload : input.workloads) {
        const GuestWorkload* known = findGuestWorkload(workload);
        if (!known || !ran(input, actuator, workload)) continue;
        for (const GuestMode mode : {GuestMode::Vcpufold, GuestMode::Fixed}) {
          const Estimate real = guestRatio(input.samples, actuator.actuator, workload, mode, GuestMode::Unfolded);
          const Estimate emulated =
              estimatePairedRatio(emulatedThroughputs(input.emulated, known->emulated, emulatedMode(mode)),
                            emulatedThroughputs(input.emulated, known->emulated, "unfolded"));
          if (emulated.samples == 0) continue;
          const double gap = emulated.median > 0 ? real.median / emulated.median : 0;
          out << "| " << workload << " (`" << actuator.actuator << "`) | " << known->emulated << " | "
              << guestModeName(mode) << " / unfolded | " << ratioText(real) << " | " << ratioText(emulated) << " | "
              << format("%.2f", gap) << (std::abs(gap - 1) > 0.2 ? " (gap over 20%)" : "") << " |\n";
        }
      }
    }
    out << "\n";
  }
  if (!input.plotFile.empty()) out << "![" << input.plotFile << "](" << input.imagePrefix << input.plotFile << ")\n";
  return out.str();
}

}  // namespace vcpufold::bench
