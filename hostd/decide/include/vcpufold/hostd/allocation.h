// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The allocation law: how many vCPUs each VM should keep busy. A pure
// function of this tick's inputs and the previous tick's per-VM state.
//
//   demand   = max(observed: sum over vCPUs of (run + run-queue wait) per tick,
//                  the runnable tasks the guest's agent reports), within 0..vCPUs
//              (folding hides demand from the host; the agent's report does not);
//              a report newer than the samples is the demand on its own (the
//              guest's load changed after they were taken); but a report above
//              what the host observed counts only while the host sees the VM
//              use the vCPUs it already has (observed, over the samples or a
//              short window measured since, within `kReportEvidenceSlackCpus`
//              of them): a folded busy guest's queued tasks count, an idle
//              guest's claim does not, so no guest can fold its neighbours by
//              its word alone
//   each pool (cpu_pools.h) on its own:
//   no contention (sum of demand <= capacity; for a VM alone in its pool,
//              <= capacity + `unfoldMarginCpus`): every VM gets all its vCPUs
//   contention: weighted max-min fair share of capacity (water-filling; over
//              overlapping sets of pCPUs, progressive filling); a VM's
//              hint is its share less its QEMU's own threads' load
//              (`overheadCpus`, its to pay) rounded up to whole guest cores,
//              clamped to [min-vcpus, min(vCPUs, max-vcpus)]
//   fold at once; unfold only when a larger hint has been asked for without a
//   break for `unfoldDelay` (time, not ticks: decisions also come between
//   ticks, on events), to the smallest size asked for meanwhile; and, under
//   contention, only when the share reaches the current hint plus
//   `unfoldMarginCpus` (a share of 1.2 CPUs holds a hint of 1 however long it
//   lasts: load noise and QEMU's own threads move a share by that much, and a
//   hint that followed them would flap around the core boundary)
//   a dedicated VM (each vCPU pinned to a pCPU of its own) is never folded
//   VMs without a working agent, and VMs whose policy is off, fixed or guest,
//   take part at their demand and keep their own entitlement; only the
//   cooperative ones are folded; so do VMs whose agent declines auto hints
//   for its guest kernel class (kernel_class.h; hinted all their vCPUs, as
//   with policy off, unless their policy is fixed). An agent that is connected but has not
//   acknowledged a hint (or stopped acknowledging) is hinted all its vCPUs,
//   which folds nothing, until it acknowledges. docs/allocation.md explains why.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "vcpufold/hostd/cpu_pools.h"
#include "vcpufold/hostd/fair_share.h"
#include "vcpufold/hostd/policy.h"

namespace vcpufold::hostd {

struct VmDemand {
  std::string name;
  std::uint32_t vcpus = 1;
  std::uint32_t threadsPerCore = 1;      // the guest's SMT width, from its hello
  double observedDemand = 0.0;           // CPUs: (run + delay) of all vCPUs per tick
  std::optional<double> reportedDemand;  // runnable tasks the agent reports
  bool reportIsNewer = false;            // reported after the samples: it alone is the demand
  // The vCPUs the VM could run on while the samples were taken: its hint in
  // force, the smaller one before a recent unfold (the guest takes a moment
  // to use a larger hint), none: all its vCPUs (not hinted).
  std::optional<std::uint32_t> vcpusInUse;
  // Its vCPUs' demand over a short window taken after the samples (between
  // ticks, when its agent reported a rise): evidence newer than the samples.
  std::optional<double> recentObservedDemand;
  // CPUs the VM's QEMU spent outside its vCPUs (emulator and I/O threads,
  // vhost): its own load, on top of its vCPUs' demand and paid from its own
  // share, never the pool's (so a guest that keeps them busy folds only itself).
  double overheadCpus = 0.0;
  double weight = 100.0;                 // policy weight, else the VM cgroup's (cpu.weight scale)
  FoldPolicy policy;
  bool cooperative = false;  // an agent is connected and acknowledges hints
  bool reachable = false;    // an agent is connected and said hello (acknowledging or not)
  // Set when the agent said in hello that auto hints do not fold its guest
  // (its kernel class, which the bench shows losing): the class's name.
  std::optional<std::string> autoFoldDeclinedClass;
};

// A report above the observed demand counts when the host observes at least
// the VM's vCPUs in use less this: a busy vCPU thread of a contended host
// shows run + wait of about 1 CPU, less the moments its guest idles.
constexpr double kReportEvidenceSlackCpus = 0.25;

// What allocation remembers about a VM from one tick to the next.
struct HintState {
  std::uint32_t hint = 0;          // the hint in force (0: none yet)
  std::uint32_t unfoldTarget = 0;  // smallest larger hint asked for during the current wait
  // Since when a larger hint has been asked for without a break; none: no wait.
  std::optional<std::chrono::steady_clock::time_point> unfoldAskedSince;
  // When the hint last grew, and from what (0: never grew): until the guest's
  // samples cover the larger hint, it is judged by the smaller one.
  std::optional<std::chrono::steady_clock::time_point> grewAt;
  std::uint32_t hintBeforeGrowth = 0;
  friend bool operator==(const HintState&, const HintState&) = default;
};

// Every hinted VM's state, by VM name. Hashed: a decision looks up each of a
// thousand VMs, where an ordered map's string comparisons were a quarter of
// the cost of a decision between ticks.
using HintStates = std::unordered_map<std::string, HintState>;

// The hint a VM's samples were taken under (VmDemand::vcpusInUse): the hint
// in force, or the one before it where it grew since a window before the
// samples' window began (windowStartedAt); none when the VM is not hinted.
std::optional<std::uint32_t> vcpusInUseDuring(const HintState* state,
                                              std::optional<std::chrono::steady_clock::time_point> windowStartedAt,
                                              std::chrono::steady_clock::time_point now);

struct AllocationConfig {
  std::chrono::milliseconds unfoldDelay{1000};  // 0: unfold at once
  double unfoldMarginCpus = 0.25;               // under contention, a share this close above the hint holds it
};

// When the earliest pending unfold falls due (for a decision then), if any.
std::optional<std::chrono::steady_clock::time_point> nextUnfoldDue(const AllocationConfig& config,
                                                                   const HintStates& state);

struct VmAllocation {
  std::string name;
  double demand = 0.0;                // as used: its vCPUs' (within 0..vCPUs) plus its overhead
  double overhead = 0.0;              // of that, its QEMU's own threads
  bool reportDiscounted = false;      // its agent reported more than the host saw it use: not counted
  double share = 0.0;                 // CPUs of the pool this VM is entitled to, its overhead included
  std::optional<std::uint32_t> hint;  // vCPUs to keep preferred; none: not hinted
  std::string reason;
  HintState state;         // for the next tick
  std::size_t pool = 0;    // index into Allocation::pools
  bool dedicated = false;  // each vCPU pinned to a pCPU of its own: never folded
};

struct PoolAllocation {
  std::string name;
  double capacity = 0.0;
  double demand = 0.0;
  bool contention = false;
};

struct Allocation {
  double capacity = 0.0;     // of every pool
  double totalDemand = 0.0;  // of every VM
  bool contention = false;   // in some pool
  std::vector<PoolAllocation> pools;
  std::vector<VmAllocation> vms;  // in input order
};

// vms in the layout's order; capacities one per layout pool.
Allocation allocate(const AllocationConfig& config, const PoolLayout& layout,
                    const std::vector<PoolCapacity>& capacities, const std::vector<VmDemand>& vms,
                    const HintStates& previous, std::chrono::steady_clock::time_point now);

// One pool that every VM may use anywhere in.
Allocation allocate(const AllocationConfig& config, double capacity, const std::vector<VmDemand>& vms,
                    const HintStates& previous, std::chrono::steady_clock::time_point now);

}  // namespace vcpufold::hostd
