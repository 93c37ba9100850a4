// SPDX-License-Identifier: GPL-2.0-or-later
#include "plots.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

namespace vcpufold::bench {

namespace {

constexpr Mode kBases[] = {Mode::Unfolded, Mode::StealLaw, Mode::BestStatic, Mode::Clairvoyant};

std::string fileSafe(std::string name) {
  std::replace(name.begin(), name.end(), '/', '-');
  return name;
}

bool runGnuplot(const std::string& directory, const std::string& script, std::string& error) {
  const std::string command = "cd '" + directory + "' && gnuplot '" + script + "' 2>>gnuplot.log";
  if (std::system(command.c_str()) == 0) return true;
  error = "gnuplot failed on " + script + "; see " + directory + "/gnuplot.log";
  return false;
}

std::string ratioPlot(const std::string& directory, const std::vector<ScenarioOutcome>& outcomes, std::string& error) {
  std::ofstream data(directory + "/contention-ratios.dat");
  data << "scenario";
  for (Mode base : kBases) data << " vs-" << modeName(base) << " low high";
  data << '\n';
  for (const auto& outcome : outcomes) {
    if (!outcome.has(Mode::Vcpufold)) continue;
    data << '"' << outcome.scenario.name << '"';
    for (Mode base : kBases) {
      if (outcome.has(base)) {
        const auto ratio = *pairedRatioOf(outcome, Mode::Vcpufold, base);
        data << ' ' << ratio.median << ' ' << ratio.low << ' ' << ratio.high;
      } else {
        data << " NaN NaN NaN";
      }
    }
    data << '\n';
  }
  data.close();
  std::ofstream script(directory + "/contention-ratios.gp");
  script
      << "set terminal png size 1200,500\nset output 'contention-ratios.png'\n"
      << "set title \"vcpufold's total throughput over each other mode's (paired per repetition: median, 95% "
         "interval)\"\n"
      << "set style data histograms\nset style histogram errorbars gap 2 lw 1\n"
      << "set style fill solid 0.7 border -1\nset boxwidth 0.9\nset yrange [0:*]\nset grid ytics\n"
      << "set key below horizontal autotitle columnheader\nset xtics rotate by -25\nset datafile missing 'NaN'\n"
      << "set arrow from graph 0, first 1 to graph 1, first 1 nohead dashtype 2 lw 2\n"
      << "set ylabel 'vcpufold / mode'\n"
      << "plot 'contention-ratios.dat' using 2:3:4:xtic(1) title 'vs unfolded', '' using 5:6:7 title 'vs steal-law', "
         "'' using 8:9:10 title 'vs best-static', '' using 11:12:13 title 'vs clairvoyant'\n";
  script.close();
  return runGnuplot(directory, "contention-ratios.gp", error) ? "contention-ratios.png" : "";
}

std::string seriesPlot(const std::string& directory, const ScenarioOutcome& outcome, std::string& error) {
  const std::string base = "contention-series-" + fileSafe(outcome.scenario.name);
  std::vector<Mode> shown;
  for (Mode mode : outcome.modes)
    if (outcome.sameAs.find(mode) == outcome.sameAs.end() && outcome.has(mode)) shown.push_back(mode);
  if (shown.empty()) return "";
  const std::size_t vmCount = outcome.scenario.vms.size();
  unsigned maxVcpus = 1;
  for (const auto& vm : outcome.scenario.vms) maxVcpus = std::max(maxVcpus, vm.vcpus);
  for (Mode mode : shown) {
    const RunResult& run = *outcome.runsOf(mode).front();
    std::ofstream data(directory + "/" + base + "-" + modeName(mode) + ".dat");
    const std::size_t points = run.vms.front().series.size();
    for (std::size_t p = 0; p < points; ++p) {
      double total = 0;
      data << run.vms.front().series[p].at;
      for (const auto& vm : run.vms) {
        data << ' ' << (p < vm.series.size() ? vm.series[p].preferred : 0);
        if (p < vm.series.size()) total += vm.series[p].operationsPerSecond;
      }
      data << ' ' << total / 1000 << '\n';
    }
  }
  std::ofstream script(directory + "/" + base + ".gp");
  script << "set terminal png size 1200," << 220 * shown.size() + 80 << "\nset output '" << base << ".png'\n"
         << "set multiplot layout " << shown.size() << ",1 title \"" << outcome.scenario.name
         << ": preferred vCPUs per VM (steps, left) and total kops/s (line, right), first repetition\"\n"
         << "set grid\nset ytics nomirror\nset y2tics\nset yrange [0:" << maxVcpus + 1
         << "]\nset y2range [0:*]\nset key outside right\nset xlabel 'seconds into the window'\n";
  for (Mode mode : shown) {
    script << "set title '" << modeName(mode) << "'\nplot ";
    for (std::size_t i = 0; i < vmCount; ++i)
      script << "'" << base << "-" << modeName(mode) << ".dat' using 1:" << i + 2 << " with steps title '"
             << outcome.scenario.vms[i].name << "', ";
    script << "'' using 1:" << vmCount + 2 << " axes x1y2 with lines lw 2 lc rgb 'black' title 'kops/s'\n";
  }
  script << "unset multiplot\n";
  script.close();
  return runGnuplot(directory, base + ".gp", error) ? base + ".png" : "";
}

}  // namespace

std::vector<std::string> drawPlots(const std::string& directory, const std::vector<ScenarioOutcome>& outcomes,
                                   std::string& error) {
  std::vector<std::string> made;
  if (auto ratios = ratioPlot(directory, outcomes, error); !ratios.empty()) made.push_back(ratios);
  for (const auto& outcome : outcomes)
    if (outcome.scenario.phased())
      if (auto series = seriesPlot(directory, outcome, error); !series.empty()) made.push_back(series);
  return made;
}

}  // namespace vcpufold::bench
