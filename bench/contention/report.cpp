// SPDX-License-Identifier: GPL-2.0-or-later
#include "report.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <sstream>

#include "bench_text.h"

namespace vcpufold::bench {

namespace {

std::string thousands(double value) { return format(value >= 10'000 ? "%.0fk" : "%.1fk", value / 1000); }

std::string withInterval(const Estimate& estimate, const std::function<std::string(double)>& show) {
  if (estimate.samples < 2) return show(estimate.median) + " (n=1)";
  return show(estimate.median) + " [" + show(estimate.low) + ", " + show(estimate.high) + "]";
}

std::string counts(const std::vector<unsigned>& sizes) {
  std::string text;
  for (std::size_t i = 0; i < sizes.size(); ++i) text += (i ? "/" : "") + std::to_string(sizes[i]);
  return text;
}

std::string planText(const FixedPlan& plan) {
  std::string text;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    if (i && plan[i].sizes == plan[i - 1].sizes) continue;
    text += (text.empty() ? "" : ", then ") + counts(plan[i].sizes);
    if (plan.size() > 1) text += " from " + format("%.0f s", plan[i].from);
  }
  return text;
}

// The ratio of medians with both sides resampled independently: the method
// before the pairing, kept beside the targets so the change shows.
std::optional<Estimate> unpairedRatioOf(const ScenarioOutcome& outcome, Mode mode, Mode base) {
  if (!outcome.has(mode) || !outcome.has(base)) return std::nullopt;
  return estimateRatio(outcome.totals(mode), outcome.totals(base));
}

std::string ratioCell(const ScenarioOutcome& outcome, Mode mode, Mode base) {
  if (mode == base) return "1";
  const auto ratio = pairedRatioOf(outcome, mode, base);
  return ratio ? ratioText(*ratio) : "-";
}

// Settling of every run of a mode, folds or unfolds.
std::string settlingText(const std::vector<Dynamics>& all, bool folds) {
  std::vector<double> reached;
  unsigned notReached = 0, total = 0;
  for (const auto& dynamics : all)
    for (const auto& settling : folds ? dynamics.folds : dynamics.unfolds) {
      if (settling.kind == Settling::Kind::Trivial) continue;
      ++total;
      if (settling.kind == Settling::Kind::NotReached)
        ++notReached;
      else
        reached.push_back(settling.ticks);
    }
  if (total == 0) return "trivial";
  std::string text;
  if (!reached.empty())
    text = format("%.1f", median(reached)) + " (max " +
           format("%.1f", *std::max_element(reached.begin(), reached.end())) + ")";
  if (notReached)
    text += (text.empty() ? "" : "; ") + std::string("not reached ") + std::to_string(notReached) + "/" +
            std::to_string(total);
  return text;
}

struct TargetLine {
  std::string target, measured, unpaired = "-";
  Verdict verdict = Verdict::NotShown;
  std::string note;
};

const ScenarioOutcome* find(const std::vector<ScenarioOutcome>& outcomes, const std::string& name) {
  for (const auto& outcome : outcomes)
    if (outcome.scenario.name == name) return &outcome;
  return nullptr;
}

void ratioTarget(std::vector<TargetLine>& lines, const std::vector<ScenarioOutcome>& outcomes, const std::string& name,
                 Mode base, double target) {
  TargetLine line;
  line.target = "`" + name + "`: vcpufold / " + modeName(base) + " >= " + format("%.2f", target);
  const auto* outcome = find(outcomes, name);
  const auto ratio = outcome ? pairedRatioOf(*outcome, Mode::Vcpufold, base) : std::nullopt;
  if (!ratio) {
    line.measured = "not run";
    line.note = "not in this run";
  } else {
    line.measured = ratioText(*ratio);
    line.unpaired = ratioText(*unpairedRatioOf(*outcome, Mode::Vcpufold, base));
    line.verdict = judgeAtLeast(*ratio, target);
  }
  lines.push_back(line);
}

std::vector<TargetLine> evaluateTargets(const std::vector<ScenarioOutcome>& outcomes, double tickSeconds) {
  std::vector<TargetLine> lines;
  ratioTarget(lines, outcomes, "steady/spinlock", Mode::Unfolded, 1.3);
  ratioTarget(lines, outcomes, "steady/spinlock", Mode::BestStatic, 0.95);
  ratioTarget(lines, outcomes, "large-dynamic", Mode::StealLaw, 1.25);
  ratioTarget(lines, outcomes, "large-dynamic", Mode::Clairvoyant, 0.9);
  ratioTarget(lines, outcomes, "steady/compute", Mode::Unfolded, 0.97);
  ratioTarget(lines, outcomes, "steady/message", Mode::Unfolded, 0.97);
  {
    TargetLine line;
    line.target = "`weights/compute`: every VM's CPU share within 10% of its weighted share (vcpufold)";
    const auto* outcome = find(outcomes, "weights/compute");
    std::vector<double> deviations;
    if (outcome)
      for (const auto* run : outcome->runsOf(Mode::Vcpufold))
        if (auto fairness = outcome->fairnessOf(*run)) deviations.push_back(*fairness);
    if (deviations.empty()) {
      line.measured = "not run";
    } else {
      const auto estimate = estimateMedian(deviations);
      line.measured = "largest deviation " + withInterval(estimate, [](double v) { return format("%.0f%%", v * 100); });
      line.verdict = judgeAtMost(estimate, 0.10);
    }
    lines.push_back(line);
  }
  // Settling and steadiness over every scenario's vcpufold runs.
  std::vector<double> folds, unfolds, steady;
  unsigned notReached = 0;
  std::vector<std::string> unsettled;
  for (const auto& outcome : outcomes)
    for (const auto* run : outcome.runsOf(Mode::Vcpufold)) {
      const auto dynamics = outcome.dynamicsOf(*run, tickSeconds);
      for (bool fold : {true, false})
        for (const auto& settling : fold ? dynamics.folds : dynamics.unfolds) {
          if (settling.kind == Settling::Kind::Reached) (fold ? folds : unfolds).push_back(settling.ticks);
          if (settling.kind == Settling::Kind::NotReached) {
            ++notReached;
            if (std::find(unsettled.begin(), unsettled.end(), outcome.scenario.name) == unsettled.end())
              unsettled.push_back(outcome.scenario.name);
          }
        }
      if (dynamics.steadyChangesPerMinute) steady.push_back(*dynamics.steadyChangesPerMinute);
    }
  const auto worst = [](const std::vector<double>& values) {
    return values.empty() ? 0.0 : *std::max_element(values.begin(), values.end());
  };
  const auto judgeWorst = [&](const std::vector<double>& values, double limit) {
    return values.empty() ? Verdict::NotShown : worst(values) <= limit ? Verdict::Met : Verdict::Missed;
  };
  lines.push_back({"settling: folds within 2 ticks (every vcpufold fold)",
                   folds.empty()
                       ? "none"
                       : "median " + format("%.1f", median(folds)) + ", max " + format("%.1f", worst(folds)) + " ticks",
                   "-", judgeWorst(folds, 2.0), ""});
  lines.push_back({"settling: unfolds within the unfold delay + 1 tick (4 ticks)",
                   unfolds.empty() ? "none"
                                   : "median " + format("%.1f", median(unfolds)) + ", max " +
                                         format("%.1f", worst(unfolds)) + " ticks",
                   "-", judgeWorst(unfolds, 4.0), ""});
  std::string where;
  for (const auto& name : unsettled) where += (where.empty() ? "" : ", ") + name;
  lines.push_back({"settling: never \"not reached\"",
                   std::to_string(notReached) + " not reached" + (where.empty() ? "" : " (" + where + ")"), "-",
                   notReached == 0 && !(folds.empty() && unfolds.empty()) ? Verdict::Met
                   : notReached                                           ? Verdict::Missed
                                                                          : Verdict::NotShown,
                   ""});
  lines.push_back(
      {"0 preferred-count changes per minute in steady phases",
       steady.empty() ? "no steady time"
                      : "median " + format("%.1f", median(steady)) + ", max " + format("%.1f", worst(steady)) + " /min",
       "-",
       steady.empty()       ? Verdict::NotShown
       : worst(steady) == 0 ? Verdict::Met
                            : Verdict::Missed,
       ""});
  return lines;
}

std::vector<std::string> whereItDoesNotHelp(const std::vector<ScenarioOutcome>& outcomes) {
  std::vector<std::string> lines;
  for (const auto& outcome : outcomes) {
    if (!outcome.has(Mode::Vcpufold)) continue;
    const std::string name = "`" + outcome.scenario.name + "`";
    for (Mode base : {Mode::Unfolded, Mode::StealLaw, Mode::StaticFair, Mode::BestStatic, Mode::Clairvoyant}) {
      const auto ratio = pairedRatioOf(outcome, Mode::Vcpufold, base);
      if (!ratio || ratio->samples < 2) continue;
      if (ratio->high < 1.0)
        lines.push_back(name + ": vcpufold loses to " + modeName(base) + ", " + ratioText(*ratio) + ".");
      else if (ratio->low <= 1.0 && (base == Mode::Unfolded || base == Mode::StealLaw))
        lines.push_back(name + ": vcpufold does not beat " + std::string(modeName(base)) + " (" + ratioText(*ratio) +
                        ": the interval includes 1).");
    }
  }
  return lines;
}

void scenarioSection(std::ostringstream& out, const ScenarioOutcome& outcome, double tickSeconds) {
  const Scenario& scenario = outcome.scenario;
  out << "\n#### `" << scenario.name << "`\n\n" << scenario.description << "  \n";
  const std::string cpus = outcome.runs.empty() ? "?" : outcome.runs.front().cpus;
  out << "pCPUs: " << scenario.pcpus << " (host CPUs " << cpus << "); warm-up " << format("%g", scenario.warmupSeconds)
      << " s, window " << format("%g", scenario.durationSeconds) << " s; " << outcome.repetitions
      << " repetitions; file `"
      << scenario.source.substr(scenario.source.rfind("bench/") == std::string::npos ? 0
                                                                                     : scenario.source.rfind("bench/"))
      << "`.  \nVMs:";
  for (const auto& vm : scenario.vms) {
    std::string schedule;
    switch (vm.schedule.kind) {
      case Schedule::Kind::Constant:
        schedule = std::to_string(vm.schedule.first) + " tasks";
        break;
      case Schedule::Kind::Step:
        schedule = "step " + std::to_string(vm.schedule.first) + "->" + std::to_string(vm.schedule.second) +
                   " tasks at " + format("%g s", vm.schedule.seconds);
        break;
      case Schedule::Kind::Square:
        schedule = "square " + std::to_string(vm.schedule.first) + "/" + std::to_string(vm.schedule.second) +
                   " tasks, period " + format("%g s", vm.schedule.seconds);
        break;
      case Schedule::Kind::Walk:
        schedule = "walk " + std::to_string(vm.schedule.second) + ".." + std::to_string(vm.schedule.third) +
                   " tasks every " + format("%.1f s", vm.schedule.seconds);
        break;
    }
    out << " " << vm.name << " (" << vm.vcpus << " vCPUs"
        << (vm.threadsPerCore > 1 ? ", SMT" + std::to_string(vm.threadsPerCore) : "") << ", weight "
        << format("%.0f", vm.weight) << ", " << vm.workload << ", " << schedule << (vm.agent ? "" : ", no agent")
        << ");";
  }
  out << "\n";
  if (outcome.search)
    for (const auto& note : outcome.search->notes) out << "Search: " << note << ".  \n";
  out << "Dynamics are measured against the " << outcome.targetsFrom << " counts.\n\n";

  out << "| mode | counts | ops/s | vs unfolded | vs steal-law | vs best-static | vs clairvoyant |\n"
      << "| --- | --- | ---: | ---: | ---: | ---: | ---: |\n";
  for (Mode mode : outcome.modes) {
    if (!outcome.has(mode)) continue;
    std::string countsText = isControlled(mode) ? "(controller)" : planText(outcome.plans.at(mode));
    if (const auto same = outcome.sameAs.find(mode); same != outcome.sameAs.end())
      countsText += " (= " + std::string(modeName(same->second)) + ", same runs)";
    out << "| " << modeName(mode) << " | " << countsText << " | "
        << withInterval(estimateMedian(outcome.totals(mode)), thousands) << " | "
        << ratioCell(outcome, mode, Mode::Unfolded) << " | " << ratioCell(outcome, mode, Mode::StealLaw) << " | "
        << ratioCell(outcome, mode, Mode::BestStatic) << " | " << ratioCell(outcome, mode, Mode::Clairvoyant) << " |\n";
  }

  out << "\n| mode | CPUs per VM | ops/s per VM | ops per CPU-second | run-queue delay | fairness (largest deviation) "
         "|\n"
      << "| --- | --- | --- | ---: | ---: | ---: |\n";
  for (Mode mode : outcome.modes) {
    const auto runs = outcome.runsOf(mode);
    if (runs.empty()) continue;
    std::string cpusText, opsText;
    std::vector<double> perCpu, delay, fairness;
    for (std::size_t i = 0; i < scenario.vms.size(); ++i) {
      std::vector<double> vmCpus, vmOps;
      for (const auto* run : runs) {
        vmCpus.push_back(run->vms[i].cpus);
        vmOps.push_back(run->vms[i].operationsPerSecond);
      }
      cpusText += (i ? " / " : "") + format("%.2f", median(vmCpus));
      opsText += (i ? " / " : "") + thousands(median(vmOps));
    }
    for (const auto* run : runs) {
      double ops = 0, cpuSeconds = 0, delays = 0;
      for (const auto& vm : run->vms) {
        ops += vm.operationsPerSecond;
        cpuSeconds += vm.cpus;
        delays += vm.delayRatio;
      }
      perCpu.push_back(cpuSeconds > 0 ? ops / cpuSeconds : 0);
      delay.push_back(delays / static_cast<double>(run->vms.size()));
      if (auto value = outcome.fairnessOf(*run)) fairness.push_back(*value);
    }
    out << "| " << modeName(mode) << " | " << cpusText << " | " << opsText << " | " << thousands(median(perCpu))
        << " | " << format("%.0f%%", median(delay) * 100) << " | "
        << (fairness.empty()
                ? "-"
                : withInterval(estimateMedian(fairness), [](double v) { return format("%.0f%%", v * 100); }))
        << " |\n";
  }

  out << "\n| mode | fold settling (ticks) | unfold settling (ticks) | mis-sizing (vCPU-s) | changes/min in steady "
         "time |\n"
      << "| --- | --- | --- | ---: | ---: |\n";
  for (Mode mode : {Mode::Vcpufold, Mode::StealLaw}) {
    const auto runs = outcome.runsOf(mode);
    if (runs.empty()) continue;
    std::vector<Dynamics> all;
    std::vector<double> missized, changes;
    for (const auto* run : runs) {
      all.push_back(outcome.dynamicsOf(*run, tickSeconds));
      missized.push_back(all.back().misSizingVcpuSeconds);
      if (all.back().steadyChangesPerMinute) changes.push_back(*all.back().steadyChangesPerMinute);
    }
    out << "| " << modeName(mode) << " | " << settlingText(all, true) << " | " << settlingText(all, false) << " | "
        << format("%.1f", median(missized)) << " | " << (changes.empty() ? "-" : format("%.1f", median(changes)))
        << " |\n";
  }
}

// How each scenario's limit was found: per demand, the search that ran and,
// where it measured every assignment, how far the descent from static-fair
// alone (the search of earlier versions) fell short of the best.
void searchSummary(std::ostringstream& out, const std::vector<ScenarioOutcome>& outcomes) {
  bool any = false;
  for (const auto& outcome : outcomes) any = any || (outcome.search && !outcome.search->demands.empty());
  if (!any) return;
  out << "\n#### How the limits were found\n\n"
      << "Per scenario and demand (task counts): the search, its best counts (after the longer check of the best "
         "few), and, where every assignment was measured, where a descent from static-fair alone ends, with its "
         "throughput over the best one's (both "
         "one-second probes of the same run; the best is the highest of many probes, so their noise favours it by a "
         "few per cent: a ratio a few per cent below 1 does not show the descent worse).\n\n"
      << "| scenario | demand | search | best | descent from static-fair | descent / best |\n"
      << "| --- | --- | --- | --- | --- | ---: |\n";
  for (const auto& outcome : outcomes) {
    if (!outcome.search) continue;
    for (const auto& demand : outcome.search->demands) {
      const std::string space = demand.space > kExhaustiveLimit ? "more than " + std::to_string(kExhaustiveLimit)
                                                                : std::to_string(demand.space);
      out << "| `" << outcome.scenario.name << "` | " << counts(demand.tasks) << " | "
          << (demand.search.exhaustive ? "all " + space + " measured"
                                       : "5 starts, " + std::to_string(demand.search.measurements) + " of " + space)
          << " | " << counts(demand.best) << " | "
          << (!demand.search.exhaustive || demand.search.descentEnd.empty() ? "-" : counts(demand.search.descentEnd))
          << " | "
          << (demand.search.exhaustive && demand.search.bestRate > 0 && !demand.search.descentEnd.empty()
                  ? format("%.2f", demand.search.descentRate / demand.search.bestRate)
                  : "-")
          << " |\n";
    }
  }
}

}  // namespace

std::string markdownReport(const ReportContext& context, const std::vector<ScenarioOutcome>& outcomes) {
  const double tickSeconds = context.tickMs / 1000.0;
  std::ostringstream out;
  out << "Machine: " << context.machine << "  \nCommit: " << context.commit << ", " << context.date << "; the run took "
      << format("%.0f", context.seconds / 60) << " min, " << context.repetitions
      << " repetitions of every mode unless a scenario says otherwise (its line below gives its own), modes "
         "interleaved.  \nReproduce: `"
      << context.command << "`\n\n"
      << "Figures are medians over the repetitions with a 95% bootstrap interval in brackets. A ratio is paired: "
         "each repetition runs every mode back to back, so a ratio is the median over the repetitions of the row's "
         "total ops/s over the column's in the same repetition, its interval from resampling repetitions (the "
         "machine's drift between repetitions cancels instead of widening it; the targets table also gives the "
         "unpaired ratio of medians, both sides resampled, for comparison). A target is *met* when its whole "
         "interval clears it, *missed* when the whole interval falls short, and *not shown* otherwise. best-static "
         "and clairvoyant are found by measuring fixed counts (see each scenario's search line), not by hostd's "
         "arithmetic.\n\n";
  if (context.standardSummary) {
    out << "#### Targets\n\n| target | measured | unpaired | verdict |\n| --- | --- | --- | --- |\n";
    for (const auto& line : evaluateTargets(outcomes, tickSeconds))
      out << "| " << line.target << " | " << line.measured << " | " << line.unpaired << " | "
          << verdictName(line.verdict) << (line.note.empty() ? "" : " (" + line.note + ")") << " |\n";
    out << "\n#### Where vcpufold does not help\n\n";
    const auto losses = whereItDoesNotHelp(outcomes);
    if (losses.empty()) out << "Nowhere in this run: vcpufold's interval is above 1 against every other mode.\n";
    for (const auto& line : losses) out << "- " << line << "\n";
  }
  searchSummary(out, outcomes);
  for (const auto& plot : context.plots) out << "\n![" << plot << "](" << context.imagePrefix << plot << ")\n";
  for (const auto& outcome : outcomes) scenarioSection(out, outcome, tickSeconds);
  return out.str();
}

std::string runsCsv(const std::vector<ScenarioOutcome>& outcomes) {
  std::ostringstream out;
  out << "scenario,mode,repetition,vm,window_s,ops_per_s,cpus,ops_per_cpu_s,delay_ratio,context_switches_per_s,"
         "preferred_changes,preferred_at_end,weights_applied,host_cpus\n";
  for (const auto& outcome : outcomes)
    for (const auto& run : outcome.runs)
      for (const auto& vm : run.vms)
        out << run.scenario << ',' << modeName(run.mode) << ',' << run.repetition << ',' << vm.name << ','
            << format("%.3f", run.windowSeconds) << ',' << format("%.1f", vm.operationsPerSecond) << ','
            << format("%.4f", vm.cpus) << ',' << format("%.1f", vm.operationsPerCpuSecond) << ','
            << format("%.4f", vm.delayRatio) << ',' << format("%.1f", vm.contextSwitchesPerSecond) << ','
            << (vm.preferred.empty() ? 0 : vm.preferred.size() - 1) << ','
            << (vm.preferred.empty() ? 0 : vm.preferred.back().count) << ',' << (run.weightsApplied ? 1 : 0) << ",\""
            << run.cpus << "\"\n";
  return out.str();
}

std::string seriesCsv(const std::vector<ScenarioOutcome>& outcomes) {
  std::ostringstream out;
  out << "scenario,mode,repetition,vm,t_s,ops_per_s,preferred\n";
  for (const auto& outcome : outcomes)
    for (const auto& run : outcome.scenario.phased() ? outcome.runs : std::vector<RunResult>{})
      for (const auto& vm : run.vms)
        for (const auto& point : vm.series)
          out << run.scenario << ',' << modeName(run.mode) << ',' << run.repetition << ',' << vm.name << ','
              << format("%.2f", point.at) << ',' << format("%.0f", point.operationsPerSecond) << ',' << point.preferred
              << '\n';
  return out.str();
}

}  // namespace vcpufold::bench
