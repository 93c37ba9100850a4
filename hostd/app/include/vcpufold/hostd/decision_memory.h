// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// What hostd's decisions carry from one to the next, and when a decision
// between ticks is called for. Pure, time passed in: the daemon
// (hostd_daemon.cpp) keeps the sockets, timers and logs, and hands this the
// snapshots and channel states.
//
// It remembers: the allocation state (hints, pending unfolds), the samples
// and per-CPU ticks the next window starts from, the last non-VM load, when
// the current missing-input episode began, and the inputs of the last
// decision taken on complete inputs, which decisions between ticks reuse
// with newer channel states.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "vcpufold/common/log_throttle.h"
#include "vcpufold/hostd/fleet_rule.h"
#include "vcpufold/hostd/host_snapshot.h"
#include "vcpufold/hostd/tick.h"

namespace vcpufold::hostd {

inline constexpr std::uint32_t kEventDecisionsPerVm = 20;  // an honest guest changing load every second keeps its reaction
inline constexpr std::chrono::milliseconds kEventDecisionWindow{10'000};

struct DecisionSettings {
  AllocationConfig allocation;
  std::chrono::milliseconds lease{3000};  // a hint's lease; also how long a status counts
  std::chrono::milliseconds missingInputHold{10'000};
  double reserveCpus = 0.0;
  std::vector<FleetRule> rules;  // default policies for VMs without their own
};

// The pool, its source, the samples and the host's busy CPUs of a snapshot,
// the latter against the per-CPU ticks of an earlier one.
void addSnapshotInputs(TickInputs& inputs, const HostSnapshot& snapshot,
                       const std::optional<std::map<unsigned, CpuTicks>>& previousTicks);

// A snapshot older than three ticks is not evidence of now: a decision on it
// holds the hints in force (missing inputs) instead of deciding anew.
bool snapshotIsStale(std::chrono::steady_clock::time_point takenAt, std::chrono::steady_clock::time_point now,
                     std::chrono::milliseconds interval);

class DecisionMemory {
 public:
  using Clock = std::chrono::steady_clock;

  // A decision on the newest snapshot. staleWhy: the snapshot is too old to
  // be evidence (or there is none), and why; the decision then holds.
  const TickReport& decideOnSnapshot(const DecisionSettings& settings, const std::vector<VmRecord>& vms,
                                     const HostSnapshot* snapshot, const std::optional<std::string>& staleWhy,
                                     ChannelSnapshots channels, Clock::time_point now, std::uint64_t number);
  // A snapshot taken only to start the first window (`--oneshot`): its
  // counters become what the next decision's samples are measured against;
  // nothing is decided on it.
  void startWindowAt(const HostSnapshot& snapshot);
  // A decision between ticks: the last complete decision's samples, pool and
  // capacity with the channels as they are now. None when there is no
  // decision to revise (host-wide inputs missing since, or none yet); a pool
  // held then for a VM without a sample is held again.
  const TickReport* decideOnEvent(const DecisionSettings& settings, ChannelSnapshots channels, Clock::time_point now,
                                  std::uint64_t number);
  [[nodiscard]] bool canRevise() const { return decidedInputs_.has_value(); }

  // Whether a snapshot taken at takenAt is decided on. Rates over a window
  // much shorter than the tick are noise (a thread that ran for the last
  // 0.5 ms reads as a whole busy CPU): such a snapshot is kept for the
  // inventory and decided on with the next one. True means it will be.
  bool worthDeciding(Clock::time_point takenAt, std::chrono::milliseconds interval);

  // A cooperative agent's demand report that moved by a task or more from
  // what the last decision used calls for a decision now: why, or none.
  [[nodiscard]] std::optional<std::string> demandMoved(const std::string& vm, double demand, bool cooperative) const;
  // Whether one more decision between ticks may be called for by this VM's
  // reports now: kEventDecisionsPerVm in kEventDecisionWindow each, so a
  // guest swinging its demand on purpose cannot make the control thread
  // decide for the whole host at its pace. Budgets of VMs gone are dropped
  // at the next snapshot decision.
  bool allowEventDecisionFor(const std::string& vm, Clock::time_point now);

  // A VM's vCPU demand measured over a short window ending at `at` (between
  // ticks, when its agent reported a rise): counted as evidence by the
  // decisions whose samples it is newer than (allocation.h).
  void noteRecentDemand(const std::string& vm, double demandCpus, Clock::time_point at);
  // Whether a VM's reported demand rises above what the last decision saw
  // its vCPUs use, or `measured` if larger (by more than the evidence slack):
  // worth measuring (again).
  [[nodiscard]] bool claimNeedsEvidence(const std::string& vm, double reportedDemand, double measured = 0.0) const;
  // When the earliest pending unfold falls due.
  [[nodiscard]] std::optional<Clock::time_point> nextUnfoldDue(const AllocationConfig& config) const;

  [[nodiscard]] const TickReport& latest() const { return latest_; }
  // When the current missing-input episode began (host-wide or some pool's);
  // none while inputs are complete.
  [[nodiscard]] std::optional<Clock::time_point> inputsMissingSince() const { return inputsMissingSince_; }

 private:
  void remember(const TickInputs& inputs, const HostSnapshot* snapshot, bool stale, Clock::time_point now);
  void indexRows();  // rowOf_ after latest_ changed

  TickReport latest_;
  std::map<std::string, LogThrottle> eventBudgets_;  // per VM, see allowEventDecisionFor
  struct RecentDemand {
    double cpus = 0.0;
    Clock::time_point at{};
  };
  std::map<std::string, RecentDemand> recentDemand_;  // see noteRecentDemand
  // The recent demands newer than `windowStart`, for a decision on samples from then.
  [[nodiscard]] std::map<std::string, double> recentDemandSince(std::optional<Clock::time_point> windowStart) const;
  std::unordered_map<std::string, std::size_t> rowOf_;  // latest_.vms by name
  HintStates hintState_;
  std::map<std::string, VmSample> previousSamples_;
  std::optional<std::map<unsigned, CpuTicks>> previousTicks_;
  std::map<std::string, double> previousNonVmCpus_;   // by pool
  std::optional<Clock::time_point> windowStartedAt_;  // when the newest decided snapshot was taken
  std::optional<Clock::time_point> inputsMissingSince_;      // anything missing: for the log
  std::optional<Clock::time_point> hostInputsMissingSince_;  // a host-wide input: every VM's hold
  std::map<std::string, Clock::time_point> poolInputsMissingSince_;  // a VM sample: its pool's hold
  std::optional<TickInputs> decidedInputs_;
  std::optional<Clock::time_point> lastDecidedSnapshotAt_;
};

}  // namespace vcpufold::hostd
