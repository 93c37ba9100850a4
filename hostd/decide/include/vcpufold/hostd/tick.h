// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// One tick of hostd as a pure function: inventory, samples, channel states and
// the CPU pool in; allocation and one report row per VM out. The daemon and
// --oneshot do the I/O around it; status, metrics and logs render its report.
//
// Failing toward unfolded: a decision is taken only on complete inputs (the
// pool, the host's CPU time, a vCPU sample of every VM, a fresh inventory).
// Otherwise the hints in force are held (and so their leases renewed) for
// `missingInputHold`, never made smaller; after that they are withdrawn, the
// leases lapse and the guests unfold or fall back to their own steal law.
// What is held is what the missing input concerns: a host-wide input (the
// pool, /proc/stat, the inventory) holds every VM; a VM's missing vCPU sample
// holds the VMs of its CPU pool only, and the other pools decide normally
// (their capacity and demand do not depend on it).
// A guest's demand report counts only while it is fresh and the agent is
// cooperative, and never above the VM's vCPUs. When the reported demand moved
// by a task or more after the samples' window began, the report replaces what
// they observed (the guest's load changed, and the samples average across the
// change); otherwise the demand is at least what the host observed (folding
// hides demand, and a guest that always under-reports must not make the
// decisions flap).

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vcpufold/hostd/allocation.h"
#include "vcpufold/hostd/channel_snapshot.h"
#include "vcpufold/hostd/vcpu_sample.h"
#include "vcpufold/hostd/vm_record.h"
#include "vcpufold/protocol/cpu_set.h"
#include "vcpufold/protocol/messages.h"

namespace vcpufold::hostd {

struct VmReport {
  VmRecord record;
  std::optional<VmLoad> load;  // none on the first tick or after a counter reset
  bool sampled = false;        // this decision's samples include the VM (else its pool holds)
  double weight = 100.0;
  ChannelSnapshot channel;
  bool statusFresh = false;  // the agent's last status counted as evidence this tick
  VmAllocation allocation;
  std::string pool;  // the name of its pool (its pCPUs)
  bool inputsMissing = false;  // its hint was held or withdrawn, not decided (a host-wide input or its pool's)
  // The hint to send, finished but for its sequence number (the channel
  // numbers what it sends); none: not hinted.
  std::optional<protocol::Hint> hint;
};

// One pool's part of a decision (cpu_pools.h).
struct PoolReport {
  std::string name;  // its pCPUs as a CPU list
  std::size_t cpus = 0;
  std::size_t vms = 0;
  std::size_t dedicatedVms = 0;
  double busyCpus = 0.0;
  double vmRunCpus = 0.0;
  double measuredNonVmCpus = 0.0;
  double nonVmCpus = 0.0;
  double reserveCpus = 0.0;
  double capacity = 0.0;
  double demand = 0.0;
  bool contention = false;
  // Set when a VM of this pool has no sample: its hints were held (or, past
  // the hold, withdrawn) instead of decided.
  std::optional<std::string> inputsMissing;
  bool hintsWithdrawn = false;
};

struct TickReport {
  std::uint64_t tick = 0;
  double poolCpus = 0.0;
  std::string poolSource;
  double reserveCpus = 0.0;
  double hostBusyCpus = 0.0;
  double vmRunCpus = 0.0;
  double measuredNonVmCpus = 0.0;  // host busy - VM run this tick, over every pool
  double nonVmCpus = 0.0;          // what capacity counts: per pool the smaller of this tick's and the last's
  double capacity = 0.0;           // of every pool
  double totalDemand = 0.0;
  bool contention = false;        // in some pool
  protocol::CpuSet isolatedCpus;  // not VM capacity (isolcpus, nohz_full)
  std::vector<PoolReport> pools;
  // Set when the tick held or withdrew hints instead of deciding, for every
  // VM (a host-wide input) or for some pools (PoolReport::inputsMissing).
  std::optional<std::string> inputsMissing;
  bool inputsMissingHostWide = false;
  bool hintsWithdrawn = false;  // host-wide inputs missing for longer than the hold: no VM hinted
  std::vector<VmReport> vms;
  HintStates hintState;  // what the next decision starts from
};

struct TickInputs {
  std::vector<VmRecord> vms;
  std::map<std::string, VmSample> samples;
  std::map<std::string, VmSample> previousSamples;
  ChannelSnapshots channels;
  double poolCpus = 0.0;
  std::string poolSource;
  protocol::CpuSet poolCpuSet;    // the VM pool's pCPUs; empty: 0..poolCpus-1
  protocol::CpuSet isolatedCpus;  // isolcpus and nohz_full pCPUs
  double reserveCpus = 0.0;
  std::optional<double> hostBusyCpus;               // on the pool; none on the first tick: no non-VM load known
  std::map<unsigned, double> cpuBusy;               // per pCPU; empty: hostBusyCpus spread evenly over the pool
  std::map<std::string, double> previousNonVmCpus;  // the last tick's measured non-VM load, by pool
  bool cgroupV2 = true;                             // libvirt's cpu_shares is cpu.weight (v2) or cpu.shares (v1)

  std::chrono::steady_clock::time_point now{};  // the time of this decision
  // When the samples' window began (the previous snapshot): a guest whose
  // reported demand moved after that changed its load within the window or
  // since; its report is the current level, where the samples average across
  // the change.
  std::optional<std::chrono::steady_clock::time_point> windowStartedAt;
  // VMs' vCPU demand over a short window measured after the samples, by
  // name: evidence for a report that rose since (allocation.h).
  std::map<std::string, double> recentObservedDemand;
  std::chrono::milliseconds statusMaxAge{3'000};  // a status older than this (or 2 of its intervals) is stale
  std::vector<std::string> missingInputs;         // what the daemon could not read this tick, and why
  std::optional<std::chrono::steady_clock::time_point> inputsMissingSince;  // start of the host-wide episode
  // Start of each pool's episode of a missing VM sample, by pool name.
  std::map<std::string, std::chrono::steady_clock::time_point> poolInputsMissingSince;
  std::chrono::milliseconds missingInputHold{10'000};                       // how long hints are held on missing inputs
  std::uint32_t hintTtlMs = 3000;                                           // the lease of every hint sent
};

// Why this tick's host-wide inputs are not complete (the daemon's
// missingInputs, an empty pool), joined; none when they are.
std::optional<std::string> missingInputsOf(const TickInputs& inputs);

// Whether a VM's last status report is evidence now: the agent cooperates, and
// the report is younger than two of its own intervals and statusMaxAge.
bool statusIsFresh(const ChannelSnapshot& channel, std::chrono::steady_clock::time_point now,
                   std::chrono::milliseconds statusMaxAge);

// A VM's weight on the cpu.weight scale (100 = default): the policy's, else its
// cgroup's (v1 shares 1024 = weight 100), else 100.
double effectiveWeight(const VmRecord& vm, bool cgroupV2);

// The wire hint for a VM's allocation: its vCPUs, the lease, the policy's
// name for the guest (off and fixed tell the agent not to fall back), and the
// reason, cut to what the protocol carries.
protocol::Hint wireHint(std::uint32_t vcpus, FoldMode mode, std::uint32_t ttlMs, const std::string& reason);

// One decision. hintState is what the previous decision left (its
// report.hintState; empty at start); the report carries the next one.
TickReport decideTick(const AllocationConfig& config, const TickInputs& inputs, const HintStates& hintState,
                      std::uint64_t tick);

// A decision between ticks: `previous` must have been decided (by decideTick
// or by this) on the same inventory and samples; inputs may differ from its
// only in their channels, recentObservedDemand and now. Its rows' records,
// loads and weights are kept (they depend on nothing else), which spares a
// decision between ticks the samples' lookups and arithmetic; the result is
// what decideTick would decide on these inputs.
TickReport reviseDecision(const AllocationConfig& config, TickReport previous, const TickInputs& inputs,
                          const HintStates& hintState, std::uint64_t tick);

}  // namespace vcpufold::hostd
