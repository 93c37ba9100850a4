// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The latency bench's reading of its logs: when a demand change happened, when
// the changed guest's agent reported it, when hostd decided, when the other
// guest's agent received and applied the hint; and the split of each change
// into stages. Pure over the parsed times (all in one clock, ms), so the
// emulated and the TCG-lab runs share it.

#include <optional>
#include <string>
#include <vector>

namespace vcpufold::bench {

struct DemandChange {
  double atMs = 0;
  bool wakes = false;  // the neighbour became busy: the measured VM must fold
};

struct AgentHint {
  double receivedMs = 0, applyMs = 0;
  unsigned vcpus = 0;
};

// Parsers of the debug lines hostd and the agent write (monotonic ms of their
// own clock); unreadable files give nothing.
std::vector<double> readDecisionTimes(const std::string& hostdLog);
std::vector<AgentHint> readAgentHints(const std::string& agentLog);
// The same from the log's text.
std::vector<AgentHint> parseAgentHints(const std::string& agentLogText);
std::vector<double> readEarlyStatusTimes(const std::string& agentLog);

// hostd's tick decisions only (a decision between ticks names its reason).
std::vector<double> readTickDecisionTimes(const std::string& hostdLog);

// A guest's clock offset (guest minus host, ms) from the hints hostd re-sends
// at every tick (lease renewals): the least "received in the guest minus tick
// decision on the host" over the ticks, i.e. the offset plus the quickest
// delivery, which is what a measured stage cannot go below. A tick counts
// only with no other decision in the 100 ms before it (else which hint
// arrived is ambiguous), and its hint is looked for within `coarseUncertainty`
// of where the coarse offset puts it. None when no tick qualifies or the
// result disagrees with the coarse offset by more than its uncertainty.
std::optional<double> offsetFromRenewals(const std::vector<double>& tickDecisions, const std::vector<double>& decisions,
                                         const std::vector<AgentHint>& hints, double coarseOffset,
                                         double coarseUncertainty);

// Times in each stage, ms; `report` and `decide` only where the change was
// reported early (else the decision was a tick's).
struct Stages {
  std::vector<double> report, decide, send, apply, total;
};

struct LatencySplit {
  Stages fold, unfold;
};

// For each change, the measured VM's first hint after it that folds it to
// `folded` (or unfolds it above), the last decision before that hint arrived
// and the neighbour's first early report after the change.
LatencySplit splitIntoStages(const std::vector<DemandChange>& changes, const std::vector<double>& decisions,
                             const std::vector<AgentHint>& hints, const std::vector<double>& earlyReports,
                             unsigned folded);

// Nearest-rank quantile; 0 for none.
double quantile(std::vector<double> values, double q);

// "fold     10 of 10 changes timed" and a median / p95 / max row per stage.
std::string describeStages(const char* direction, const Stages& stages, unsigned asked);

}  // namespace vcpufold::bench
