// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// What ran on a guest's vCPUs during a measurement: the lines of
// `/lab/where diff` (tests/lab/guest/guests-bench.sh: per-vCPU deltas of
// /proc/stat, /proc/interrupts, /proc/softirqs and the threads that ran,
// each by its last CPU), read into a struct, and the report's table of what
// runs on the vCPUs a folded guest does not prefer, beside the same vCPUs
// unfolded. Pure text in, text out (unit-tested).

#include <map>
#include <string>
#include <vector>

#include "guests_plan.h"

namespace vcpufold::bench {

struct WhereSample {
  std::string actuator;
  GuestMode mode = GuestMode::Unfolded;
  double windowSeconds = 0;
  std::vector<unsigned> preferred;  // the guest's preferred CPUs at the end (all online when unfolded)
  // Per CPU: user, nice, system, idle, iowait, irq, softirq (ticks).
  std::map<unsigned, std::vector<long long>> stat;
  // "irq LOC", "softirq SCHED", "thread rcu_preempt" -> CPU -> count (ticks for threads).
  std::map<std::string, std::map<unsigned, long long>> events;
};

// Parses `/lab/where diff` output; lines it does not know are skipped.
WhereSample parseWhere(const std::string& text);

// The table: for each actuator, the vCPUs a folded guest does not prefer
// (those outside its preferred set; unfolded, those outside the first
// `foldedVcpus`, the set fixed folds onto), per vCPU: busy share of its
// ticks, and the interrupts, softirqs and threads that ran there, per
// second, the medians over guests and repetitions by mode. Empty when
// there are no samples.
std::string renderWhereTable(const std::vector<WhereSample>& samples, unsigned foldedVcpus);

}  // namespace vcpufold::bench
