// SPDX-License-Identifier: GPL-2.0-or-later
#include "fold_cost.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "bench_text.h"
#include "statistics.h"

namespace vcpufold::bench {

bool spreadRunsFirst(unsigned repetition) { return repetition % 2 == 1; }

std::string foldCostCsv(const std::vector<FoldCostPair>& pairs) {
  std::string csv = "kernel,repetition,spread_s,folded_s\n";
  for (const auto& pair : pairs)
    csv += pair.kernel + "," + std::to_string(pair.repetition) + "," + format("%.3f", pair.spreadSeconds) + "," +
           format("%.3f", pair.foldedSeconds) + "\n";
  return csv;
}

std::vector<FoldCostPair> readFoldCostCsv(const std::string& csv) {
  std::vector<FoldCostPair> pairs;
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);  // the header
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    std::string kernel, repetition, spread, folded;
    if (!std::getline(fields, kernel, ',') || !std::getline(fields, repetition, ',') ||
        !std::getline(fields, spread, ',') || !std::getline(fields, folded, ','))
      throw std::runtime_error("fold-cost CSV: short row: " + line);
    try {
      pairs.push_back({kernel, static_cast<unsigned>(std::stoul(repetition)), std::stod(spread), std::stod(folded)});
    } catch (const std::exception&) {
      throw std::runtime_error("fold-cost CSV: not a number in: " + line);
    }
  }
  return pairs;
}

std::string renderFoldCost(const FoldCostReportInput& input) {
  std::vector<std::string> kernels;
  for (const auto& pair : input.pairs)
    if (std::find(kernels.begin(), kernels.end(), pair.kernel) == kernels.end()) kernels.push_back(pair.kernel);
  std::ostringstream out;
  out << "One guest (" << input.vcpus << " vCPUs) confined by the host to one pCPU; one unit is the compute "
      << "workload's four shell loops of " << input.unitSize
      << " iterations, spread over every vCPU or folded into a cpuset of one, the two ways back to back in "
      << "alternating order. Folded / spread is work per pCPU second: the median of the per-pair ratios of "
      << "unit times, with a paired 95% bootstrap interval (" << input.machine << ", commit " << input.commit << ", "
      << input.date << ", `" << input.command << "`).\n\n"
      << "| guest kernel | pairs | folded / spread | spread unit (median s) | folded unit (median s) | pairs with the "
         "folded unit slower |\n"
      << "| --- | ---: | ---: | ---: | ---: | ---: |\n";
  for (const auto& kernel : kernels) {
    std::vector<double> spreadRate, foldedRate, spreadSeconds, foldedSeconds;
    unsigned slower = 0;
    for (const auto& pair : input.pairs) {
      if (pair.kernel != kernel || pair.spreadSeconds <= 0 || pair.foldedSeconds <= 0) continue;
      spreadRate.push_back(1 / pair.spreadSeconds);
      foldedRate.push_back(1 / pair.foldedSeconds);
      spreadSeconds.push_back(pair.spreadSeconds);
      foldedSeconds.push_back(pair.foldedSeconds);
      if (pair.foldedSeconds > pair.spreadSeconds) ++slower;
    }
    const Estimate ratio = estimatePairedRatio(foldedRate, spreadRate);
    out << "| " << kernel << " | " << spreadRate.size() << " | " << ratioText(ratio) << " | "
        << format("%.2f", median(spreadSeconds)) << " | " << format("%.2f", median(foldedSeconds)) << " | " << slower
        << " of " << spreadRate.size() << " |\n";
  }
  out << "\nA ratio below 1 whose interval stays below 1 is work the guest's side of folding costs; an interval "
         "containing 1 does not tell a cost from none.\n";
  return out.str();
}

}  // namespace vcpufold::bench
