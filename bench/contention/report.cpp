#include "report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

namespace vcpufold::bench {

namespace {

const Mode kModes[] = {Mode::Unfolded, Mode::StealLaw, Mode::Vcpufold, Mode::Oracle};

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

std::string thousands(double value) { return format("%.0fk", value / 1000); }

// Runs of one scenario and workload, by mode.
using Group = std::map<Mode, const RunResult*>;
std::vector<std::pair<std::string, Group>> grouped(const std::vector<RunResult>& runs) {
  std::vector<std::pair<std::string, Group>> groups;
  for (const auto& run : runs) {
    const std::string key = run.scenario + " / " + run.workload;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& group) { return group.first == key; });
    if (it == groups.end()) it = groups.insert(groups.end(), {key, {}});
    it->second[run.mode] = &run;
  }
  return groups;
}

std::string ratio(const Group& group, Mode mode, Mode base) {
  const auto a = group.find(mode), b = group.find(base);
  if (a == group.end() || b == group.end() || b->second->totalOperationsPerSecond() <= 0) return "-";
  return format("%.2f", a->second->totalOperationsPerSecond() / b->second->totalOperationsPerSecond());
}

}  // namespace

std::string markdownReport(const ReportContext& context, const std::vector<RunResult>& runs) {
  std::ostringstream out;
  out << "Machine: " << context.machine << "  \nReproduce: `" << context.command << "`\n\n";
  out << "| scenario / workload | mode | ops/s (total) | vs unfolded | vs oracle | ops/s per VM | run-queue delay | "
         "preferred changes/min | ticks to converge |\n";
  out << "| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: |\n";
  for (const auto& [key, group] : grouped(runs)) {
    for (Mode mode : kModes) {
      const auto found = group.find(mode);
      if (found == group.end()) continue;
      const RunResult& run = *found->second;
      std::string perVm;
      for (const auto& vm : run.vms) perVm += (perVm.empty() ? "" : " / ") + thousands(vm.operationsPerSecond);
      std::string converge = "-";
      if (run.scenario == "load-step") {
        const auto ticks = run.ticksToConverge(context.tickMs);
        converge = ticks ? format("%.1f", *ticks) : "not reached";
      }
      out << "| " << key << " | " << modeName(mode) << " | " << thousands(run.totalOperationsPerSecond()) << " | "
          << ratio(group, mode, Mode::Unfolded) << " | " << ratio(group, mode, Mode::Oracle) << " | " << perVm << " | "
          << format("%.0f%%", run.meanDelayRatio() * 100) << " | " << format("%.1f", run.preferredChangesPerMinute())
          << " | " << converge << " |\n";
    }
  }
  return out.str();
}

std::string csvReport(const std::vector<RunResult>& runs) {
  std::ostringstream out;
  out << "scenario,workload,mode,window_s,vm,ops_per_s,delay_ratio,preferred_changes,preferred_at_end,"
         "seconds_to_size,weights_applied\n";
  for (const auto& run : runs)
    for (const auto& vm : run.vms)
      out << run.scenario << ',' << run.workload << ',' << modeName(run.mode) << ','
          << format("%.3f", run.windowSeconds) << ',' << vm.name << ',' << format("%.1f", vm.operationsPerSecond) << ','
          << format("%.4f", vm.delayRatio) << ',' << vm.preferredChanges << ',' << vm.preferredAtEnd << ','
          << (vm.secondsToSize ? format("%.3f", *vm.secondsToSize) : "") << ',' << (run.weightsApplied ? 1 : 0) << '\n';
  return out.str();
}

std::string plotData(const std::vector<RunResult>& runs) {
  std::ostringstream out;
  out << "group";
  for (Mode mode : kModes) out << ' ' << modeName(mode);
  out << '\n';
  for (const auto& [key, group] : grouped(runs)) {
    out << '"' << key << '"';
    for (Mode mode : kModes) {
      const std::string value = ratio(group, mode, Mode::Unfolded);
      out << ' ' << (value == "-" ? "0" : value);
    }
    out << '\n';
  }
  return out.str();
}

std::string gnuplotScript(const std::string& dataFile, const std::string& pngFile) {
  std::ostringstream out;
  out << "set terminal png size 1000,450\n"
      << "set output '" << pngFile << "'\n"
      << "set title 'Total throughput relative to unfolded (emulated VMs on this host)'\n"
      << "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
      << "set boxwidth 0.9\nset yrange [0:*]\nset grid ytics\nset offsets -0.5, -0.5, 0, 0\nset key below horizontal\n"
      << "set key autotitle columnheader\nset ylabel 'x unfolded'\n"
      << "plot '" << dataFile << "' using 2:xtic(1), '' using 3, '' using 4, '' using 5\n";
  return out.str();
}

}  // namespace vcpufold::bench
