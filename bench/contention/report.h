#pragma once
// The contention bench's results as a Markdown table, a CSV file and a
// gnuplot script for the PNG plot. Pure functions of the measured runs.

#include <string>
#include <vector>

#include "bench_run.h"

namespace vcpufold::bench {

struct ReportContext {
  std::string machine;  // what ran it: CPUs, kernel, cgroup version
  std::string command;  // how to reproduce
  unsigned tickMs = 1000;
};

std::string markdownReport(const ReportContext& context, const std::vector<RunResult>& runs);
std::string csvReport(const std::vector<RunResult>& runs);
// Data for the plot: one row per scenario and workload, throughput relative to unfolded per mode.
std::string plotData(const std::vector<RunResult>& runs);
std::string gnuplotScript(const std::string& dataFile, const std::string& pngFile);

}  // namespace vcpufold::bench
