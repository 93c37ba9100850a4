// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The real-guest bench's results: its CSV, the "Real guest kernels" block of
// docs/performance.md (per actuator and workload: medians with 95% bootstrap
// intervals, ratios, the targets judged met / missed / not shown) and the
// emulated bench's ratios for the same 3 x 4 on 2 beside the real ones. Pure
// text in, text out (unit-tested); the plot is plots-side (guests_plot.h).

#include <string>
#include <vector>

#include "guests_plan.h"
#include "statistics.h"
#include "where_ran.h"

namespace vcpufold::bench {

// One measurement: every guest ran `workload` at once; each one's measured unit.
struct GuestSample {
  std::string actuator;  // "cpuset" (stock kernel), "kernel" (patched kernel)
  std::string workload;
  GuestMode mode = GuestMode::Unfolded;
  unsigned repetition = 0;
  std::vector<double> unitSeconds;  // per guest
  unsigned overdueAcks = 0;         // hostd's "not acknowledged in" lines in this measurement
  // hostd's "the host kept the guest's side waiting" lines: hints awaited
  // longer because the host had not run the VM's QEMU main loop.
  unsigned hostWaitCredits = 0;
  // The agents' "has not made the change" lines: changes their guest's kernel
  // had not made within the agent's answer time, answered with the CPUs in
  // force and again once made (printed in the bench's log, not in the CSV).
  unsigned changesAnsweredBeforeMade = 0;
  // The agents' "loop ran N ms after it was due" lines (lateAgentLoopsMs):
  // how often, and at worst how long, a guest did not run its agent (printed
  // in the bench's log, not in the CSV).
  unsigned lateAgentLoops = 0;
  double longestLateAgentLoopMs = 0;
  unsigned hintChanges = 0;         // hostd's hint changes after each guest's first (see hintChangesAfterSettling)
  double minutes = 0;               // from hostd's start to the workload's end
  // Preferred-count changes the agents received during their measured unit
  // (steady load: every guest busy, the first fold long done), summed over
  // guests (see hintChangesWithin), and that unit's mean length.
  unsigned steadyHintChanges = 0;
  double steadyMinutes = 0;
  // Units per second over all guests: the throughput the modes are compared by.
  double throughput() const;
};

// The emulated bench's total ops/s of one run (its results.csv, summed over VMs).
struct EmulatedSample {
  std::string workload;  // steady's: spinlock, compute, message
  std::string mode;      // unfolded, vcpufold, static-fair
  unsigned repetition = 0;
  double opsPerSecond = 0;
};
// Reads vcpufold-bench-contention's results.csv, keeping steady/* rows.
std::vector<EmulatedSample> readEmulatedResults(const std::string& csv);
// The total ops/s of every run of one emulated workload and mode.
std::vector<double> emulatedThroughputs(const std::vector<EmulatedSample>& samples, const std::string& workload,
                                        const std::string& mode);

struct ActuatorRun {
  std::string actuator;
  std::string kernel;   // the guests' `uname -r`
  std::string skipped;  // why it did not run, or empty
};

struct GuestsReportInput {
  std::string machine, commit, date, command;
  double minutes = 0;
  unsigned guests = 0, vcpus = 0, pcpus = 0, fixedVcpus = 0, repetitions = 0;
  std::vector<std::string> workloads;
  std::vector<ActuatorRun> actuators;
  std::vector<GuestSample> samples;
  std::vector<EmulatedSample> emulated;
  std::vector<WhereSample> where;  // what ran on the guests' vCPUs, per measurement and guest
  std::string emulatedNote;  // how the emulated runs were made, or why there are none
  std::string imagePrefix, plotFile;
  std::string guestArgs;  // added to the guests' kernel command line, if any
};

// hostd's preferred-count changes in one measurement's log, each guest's
// first change (the fold when the workload starts) left out: the workloads
// are steady, so every further change is one a steady hint would not make.
unsigned hintChangesAfterSettling(const std::string& hostdLog);
// The changes of the preferred count an agent received between fromSeconds
// and toSeconds of its guest's clock, from its debug log ("hint seq N (V
// vCPUs) received at T ms", T on CLOCK_MONOTONIC, the clock of the guest's
// uptime): a hint whose count differs from the one before it. The same
// count renewed is no change.
unsigned hintChangesWithin(const std::string& agentLog, double fromSeconds, double toSeconds);
// How late each of an agent's loops ran that it logged as late ("the
// agent's loop ran N ms after it was due"), in ms, in the log's order.
std::vector<double> lateAgentLoopsMs(const std::string& agentLog);

std::string guestsCsv(const std::vector<GuestSample>& samples);
// The ratio mode a / mode b of one actuator and workload, paired: the median
// of the per-repetition ratios (a and b of one repetition ran back to back),
// its interval from resampling repetitions. What the tables and targets use.
Estimate guestRatio(const std::vector<GuestSample>& samples, const std::string& actuator, const std::string& workload,
                    GuestMode a, GuestMode b);
// The same ratio unpaired: median(a) / median(b), both sides resampled
// independently (the method before pairing; shown beside it).
Estimate guestRatioUnpaired(const std::vector<GuestSample>& samples, const std::string& actuator,
                            const std::string& workload, GuestMode a, GuestMode b);
std::string renderGuestsReport(const GuestsReportInput& input);

}  // namespace vcpufold::bench
