// SPDX-License-Identifier: GPL-2.0-or-later
#include "latency_stages.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>

namespace vcpufold::bench {

namespace {

// Every first capture of `pattern` in the file, as a number.
std::vector<double> capturedTimes(const std::string& path, const std::regex& pattern) {
  std::vector<double> times;
  std::ifstream file(path);
  for (std::string line; std::getline(file, line);) {
    std::smatch match;
    if (std::regex_search(line, match, pattern)) times.push_back(std::stod(match[1]));
  }
  return times;
}

}  // namespace

std::vector<double> readDecisionTimes(const std::string& hostdLog) {
  return capturedTimes(hostdLog, std::regex(R"(decision \d+ at ([0-9.]+) ms: )"));
}

std::vector<double> readTickDecisionTimes(const std::string& hostdLog) {
  return capturedTimes(hostdLog, std::regex(R"(decision \d+ at ([0-9.]+) ms: snapshot )"));
}

std::optional<double> offsetFromRenewals(const std::vector<double>& tickDecisions, const std::vector<double>& decisions,
                                         const std::vector<AgentHint>& hints, double coarseOffset,
                                         double coarseUncertainty) {
  constexpr double kQuietBeforeMs = 100, kLatestDeliveryMs = 100;
  std::optional<double> least;
  for (double tick : tickDecisions) {
    const bool quiet = std::none_of(decisions.begin(), decisions.end(),
                                    [&](double d) { return d < tick && d > tick - kQuietBeforeMs; });
    if (!quiet) continue;
    // The first hint the coarse offset puts at or after the tick.
    std::optional<double> delivered;
    for (const auto& hint : hints) {
      const double onHost = hint.receivedMs - coarseOffset;
      if (onHost >= tick - coarseUncertainty && onHost <= tick + kLatestDeliveryMs) {
        delivered = hint.receivedMs - tick;
        break;
      }
    }
    if (delivered && (!least || *delivered < *least)) least = delivered;
  }
  if (!least || std::abs(*least - coarseOffset) > coarseUncertainty + kLatestDeliveryMs) return std::nullopt;
  return least;
}

std::vector<double> readEarlyStatusTimes(const std::string& agentLog) {
  return capturedTimes(agentLog, std::regex(R"(demand [0-9.]+ tasks at ([0-9.]+) ms: status sent now)"));
}

std::vector<AgentHint> readAgentHints(const std::string& agentLog) {
  std::ifstream file(agentLog);
  std::stringstream text;
  text << file.rdbuf();
  return parseAgentHints(text.str());
}

std::vector<AgentHint> parseAgentHints(const std::string& agentLogText) {
  const std::regex received(R"(\((\d+) vCPUs\) received at ([0-9.]+) ms, applied in ([0-9.]+) ms)");
  std::vector<AgentHint> hints;
  std::istringstream lines(agentLogText);
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (std::regex_search(line, match, received))
      hints.push_back({std::stod(match[2]), std::stod(match[3]), static_cast<unsigned>(std::stoul(match[1]))});
  }
  return hints;
}

LatencySplit splitIntoStages(const std::vector<DemandChange>& changes, const std::vector<double>& decisions,
                             const std::vector<AgentHint>& hints, const std::vector<double>& earlyReports,
                             unsigned folded) {
  LatencySplit split;
  for (const auto& change : changes) {
    const auto hint = std::find_if(hints.begin(), hints.end(), [&](const AgentHint& h) {
      return h.receivedMs > change.atMs && (change.wakes ? h.vcpus == folded : h.vcpus > folded);
    });
    if (hint == hints.end()) continue;
    // The decision that sent it: the last one that started before it arrived.
    const auto next = std::upper_bound(decisions.begin(), decisions.end(), hint->receivedMs);
    if (next == decisions.begin()) continue;
    const double decidedMs = *std::prev(next);
    const auto report = std::upper_bound(earlyReports.begin(), earlyReports.end(), change.atMs);
    const bool reported = report != earlyReports.end() && *report <= decidedMs;
    Stages& stages = change.wakes ? split.fold : split.unfold;
    if (reported) {
      stages.report.push_back(*report - change.atMs);
      stages.decide.push_back(decidedMs - *report);
    }
    stages.send.push_back(hint->receivedMs - decidedMs);
    stages.apply.push_back(hint->applyMs);
    stages.total.push_back(hint->receivedMs + hint->applyMs - change.atMs);
  }
  return split;
}

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(q * static_cast<double>(values.size() - 1) + 0.5)];
}

std::string describeStages(const char* direction, const Stages& stages, unsigned asked) {
  std::string text;
  char line[128];
  std::snprintf(line, sizeof line, "%-7s %3zu of %u changes timed\n", direction, stages.total.size(), asked);
  text += line;
  std::snprintf(line, sizeof line, "  %-8s %10s %10s %10s\n", "stage", "median", "p95", "max");
  text += line;
  const std::pair<const char*, const std::vector<double>*> rows[] = {{"report", &stages.report},
                                                                     {"decide", &stages.decide},
                                                                     {"send", &stages.send},
                                                                     {"apply", &stages.apply},
                                                                     {"total", &stages.total}};
  for (const auto& [name, values] : rows) {
    std::snprintf(line, sizeof line, "  %-8s %10.1f %10.1f %10.1f\n", name, quantile(*values, 0.5),
                  quantile(*values, 0.95), values->empty() ? 0.0 : *std::max_element(values->begin(), values->end()));
    text += line;
  }
  return text;
}

}  // namespace vcpufold::bench
