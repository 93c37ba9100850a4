// SPDX-License-Identifier: GPL-2.0-or-later
#include "pooled_runs.h"

#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

namespace vcpufold::bench {

namespace {

std::vector<std::string> splitFields(const std::string& line) {
  std::vector<std::string> fields;
  std::istringstream stream(line);
  std::string field;
  while (std::getline(stream, field, ',')) fields.push_back(field);
  return fields;
}

// Zero-padded, so that pairs sort by run, then repetition.
std::string pairName(std::size_t run, unsigned repetition) {
  char name[48];
  std::snprintf(name, sizeof name, "run %03zu repetition %04u", run, repetition);
  return name;
}

struct Cell {
  unsigned runs = 0;
  std::vector<double> unfolded, vcpufold, fixedWithUnfolded, unfoldedWithFixed, vcpufoldWithFixed, fixedWithVcpufold;
};

}  // namespace

std::vector<PairedMeasurement> readGuestRuns(const std::vector<std::string>& csvs) {
  std::vector<PairedMeasurement> measurements;
  for (std::size_t run = 0; run < csvs.size(); ++run) {
    std::istringstream lines(csvs[run]);
    std::string line;
    std::getline(lines, line);
    const auto header = splitFields(line);
    std::map<std::string, std::size_t> column;
    for (std::size_t index = 0; index < header.size(); ++index) column[header[index]] = index;
    for (const char* name : {"actuator", "workload", "mode", "repetition", "units_per_s_all_guests"})
      if (!column.count(name))
        throw std::runtime_error("run " + std::to_string(run + 1) + ": no column " + name + " in its header");
    // (actuator, workload, mode, repetition) -> units/s (the same on every guest's row).
    std::map<std::tuple<std::string, std::string, std::string, unsigned>, double> measured;
    while (std::getline(lines, line)) {
      if (line.empty()) continue;
      const auto fields = splitFields(line);
      if (fields.size() < header.size())
        throw std::runtime_error("run " + std::to_string(run + 1) + ": short row: " + line);
      try {
        measured[{fields[column["actuator"]], fields[column["workload"]], fields[column["mode"]],
                  static_cast<unsigned>(std::stoul(fields[column["repetition"]]))}] =
            std::stod(fields[column["units_per_s_all_guests"]]);
      } catch (const std::logic_error&) {
        throw std::runtime_error("run " + std::to_string(run + 1) + ": not a number in: " + line);
      }
    }
    for (const auto& [key, throughput] : measured)
      measurements.push_back(
          {std::get<0>(key), std::get<1>(key), std::get<2>(key), pairName(run + 1, std::get<3>(key)), throughput});
  }
  return measurements;
}

std::vector<PooledRow> poolGuestRuns(const std::vector<std::string>& csvs) {
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, Cell> cells;
  // (actuator, workload) -> the repetition's pair name -> mode -> units/s.
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::map<std::string, double>>> byCell;
  std::map<std::pair<std::string, std::string>, std::set<std::string>> runsOfCell;
  for (const auto& measurement : readGuestRuns(csvs)) {
    const std::pair<std::string, std::string> cellKey{measurement.actuator, measurement.workload};
    if (!byCell.count(cellKey)) order.push_back(cellKey);
    byCell[cellKey][measurement.pair][measurement.mode] = measurement.throughput;
    runsOfCell[cellKey].insert(measurement.pair.substr(0, measurement.pair.find(" repetition")));
  }
  for (const auto& [cellKey, repetitions] : byCell) {
    Cell& cell = cells[cellKey];
    cell.runs = static_cast<unsigned>(runsOfCell[cellKey].size());
    for (const auto& [pair, modes] : repetitions) {
      const auto vcpufold = modes.find("vcpufold"), fixed = modes.find("fixed");
      if (vcpufold != modes.end() && fixed != modes.end()) {
        cell.vcpufoldWithFixed.push_back(vcpufold->second);
        cell.fixedWithVcpufold.push_back(fixed->second);
      }
      const auto unfolded = modes.find("unfolded");
      if (unfolded == modes.end()) continue;
      if (vcpufold != modes.end()) {
        cell.unfolded.push_back(unfolded->second);
        cell.vcpufold.push_back(vcpufold->second);
      }
      if (fixed != modes.end()) {
        cell.unfoldedWithFixed.push_back(unfolded->second);
        cell.fixedWithUnfolded.push_back(fixed->second);
      }
    }
  }
  std::vector<PooledRow> rows;
  for (const auto& key : order) {
    const Cell& cell = cells[key];
    PooledRow row{key.first,
                  key.second,
                  cell.runs,
                  estimatePairedRatio(cell.vcpufold, cell.unfolded),
                  estimatePairedRatio(cell.fixedWithUnfolded, cell.unfoldedWithFixed),
                  estimatePairedRatio(cell.vcpufoldWithFixed, cell.fixedWithVcpufold),
                  0};
    for (std::size_t index = 0; index < cell.vcpufold.size(); ++index)
      if (cell.vcpufold[index] < cell.unfolded[index]) ++row.vcpufoldBelowUnfolded;
    rows.push_back(row);
  }
  return rows;
}

std::string renderPooled(const std::vector<PooledRow>& rows, const std::vector<std::string>& sources) {
  std::ostringstream out;
  out << "Paired repetitions pooled over " << sources.size() << " runs (";
  for (std::size_t index = 0; index < sources.size(); ++index)
    out << (index ? ", " : "") << "`" << sources[index] << "`";
  out << "): each ratio the median of every pooled repetition's own ratio, with a 95% bootstrap interval over "
         "the repetitions.\n\n"
      << "| actuator | workload | runs | repetitions | vcpufold / unfolded | repetitions below 1 | fixed / unfolded | "
         "vcpufold / fixed |\n"
      << "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  for (const auto& row : rows)
    out << "| `" << row.actuator << "` | " << row.workload << " | " << row.runs << " | "
        << row.vcpufoldOverUnfolded.samples << " | " << ratioText(row.vcpufoldOverUnfolded) << " | "
        << row.vcpufoldBelowUnfolded << " | " << ratioText(row.fixedOverUnfolded) << " | "
        << ratioText(row.vcpufoldOverFixed) << " |\n";
  return out.str();
}

}  // namespace vcpufold::bench
