// SPDX-License-Identifier: GPL-2.0-or-later
#include "fold_without_vcpufold.h"

#include <map>
#include <set>
#include <sstream>

namespace vcpufold::bench {

namespace {

using Key = std::pair<std::string, std::string>;  // workload, mode
using Repetition = std::map<Key, double>;

PairedFigure paired(const std::map<std::string, Repetition>& repetitions, const Key& top, const Key& bottom) {
  std::vector<double> tops, bottoms;
  PairedFigure figure;
  for (const auto& [pair, measured] : repetitions) {
    const auto a = measured.find(top), b = measured.find(bottom);
    if (a == measured.end() || b == measured.end() || b->second <= 0) continue;
    tops.push_back(a->second);
    bottoms.push_back(b->second);
    if (a->second < b->second) ++figure.below;
  }
  figure.ratio = estimatePairedRatio(tops, bottoms);
  return figure;
}

std::string figureText(const PairedFigure& figure) {
  return ratioText(figure.ratio) + " | " + std::to_string(figure.below) + " of " + std::to_string(figure.ratio.samples);
}

// The compute-folded-N workloads among the repetitions' measurements, by name.
std::set<std::string> widerFoldWorkloads(const std::map<std::string, Repetition>& repetitions) {
  static const std::string prefix = "compute-folded-";
  std::set<std::string> names;
  for (const auto& [pair, measured] : repetitions)
    for (const auto& [key, throughput] : measured)
      if (key.first.rfind(prefix, 0) == 0) names.insert(key.first);
  return names;
}

}  // namespace

std::vector<FoldWithoutVcpufold> foldWithoutVcpufold(const std::vector<PairedMeasurement>& measurements) {
  std::vector<std::string> order;
  std::map<std::string, std::map<std::string, Repetition>> byActuator;
  for (const auto& measurement : measurements) {
    if (!byActuator.count(measurement.actuator)) order.push_back(measurement.actuator);
    byActuator[measurement.actuator][measurement.pair][{measurement.workload, measurement.mode}] =
        measurement.throughput;
  }
  const Key spread{"compute", "unfolded"}, vcpufoldFold{"compute", "fixed"}, plain{"compute-folded", "unfolded"},
      plainBeside{"compute-folded", "fixed"};
  std::vector<FoldWithoutVcpufold> rows;
  for (const auto& actuator : order) {
    const auto& repetitions = byActuator[actuator];
    FoldWithoutVcpufold row{actuator,
                            paired(repetitions, vcpufoldFold, spread),
                            paired(repetitions, plain, spread),
                            paired(repetitions, vcpufoldFold, plain),
                            paired(repetitions, plainBeside, plain),
                            {}};
    if (row.vcpufoldFoldOverSpread.ratio.samples == 0 || row.plainFoldOverSpread.ratio.samples == 0 ||
        row.plainBesideVcpufold.ratio.samples == 0)
      continue;
    for (const auto& workload : widerFoldWorkloads(repetitions)) {
      const Key wider{workload, "unfolded"};
      FoldWithoutVcpufold::WiderFold fold{workload, paired(repetitions, wider, spread),
                                          paired(repetitions, wider, plain)};
      if (fold.overSpread.ratio.samples > 0) row.widerFolds.push_back(fold);
    }
    rows.push_back(row);
  }
  return rows;
}

std::string renderFoldWithoutVcpufold(const std::vector<FoldWithoutVcpufold>& rows) {
  if (rows.empty()) return "";
  std::ostringstream out;
  out << "| actuator | ratio | what it compares | paired | repetitions below 1 |\n| --- | --- | --- | ---: | ---: |\n";
  for (const auto& row : rows) {
    const std::string name = "`" + row.actuator + "`";
    out << "| " << name << " | compute: fixed / unfolded | vcpufold's fold (agents and hostd, policy fixed) "
        << "against the loops spread | " << figureText(row.vcpufoldFoldOverSpread) << " |\n";
    out << "| " << name << " | compute-folded unfolded / compute unfolded | the same fold made by the "
        << "workload itself, no vcpufold, against spread | " << figureText(row.plainFoldOverSpread) << " |\n";
    out << "| " << name << " | compute fixed / compute-folded unfolded | vcpufold's fold against the "
        << "workload's own | " << figureText(row.vcpufoldFoldOverPlain) << " |\n";
    out << "| " << name << " | compute-folded: fixed / unfolded | the workload's own fold with vcpufold's "
        << "agents and hostd running beside it, against it alone | " << figureText(row.plainBesideVcpufold) << " |\n";
    for (const auto& fold : row.widerFolds) {
      const std::string vcpus = fold.workload.substr(fold.workload.rfind('-') + 1);
      out << "| " << name << " | " << fold.workload << " unfolded / compute unfolded | the workload's own fold onto "
          << vcpus << " vCPUs, no vcpufold, against spread | " << figureText(fold.overSpread) << " |\n";
      out << "| " << name << " | " << fold.workload << " unfolded / compute-folded unfolded | the workload's own fold "
          << "onto " << vcpus << " vCPUs against its fold onto vCPU 0 | " << figureText(fold.overOneVcpu) << " |\n";
    }
  }
  return out.str();
}

}  // namespace vcpufold::bench
