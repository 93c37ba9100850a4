// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The allocation law: how many vCPUs each VM should keep busy. A pure
// function of this tick's inputs and the previous tick's per-VM state.
//
//   demand   = max(observed: sum over vCPUs of (run + run-queue wait) per tick,
//                  the runnable tasks the guest's agent reports), within 0..vCPUs
//              (folding hides demand from the host; the agent's report does not);
//              a report newer than the samples is the demand on its own (the
//              guest's load changed after they were taken)
//   each pool (cpu_pools.h) on its own:
//   no contention (sum of demand <= capacity; for a VM alone in its pool,
//              <= capacity + `unfoldMarginCpus`): every VM gets all its vCPUs
//   contention: weighted max-min fair share of capacity (water-filling; over
//              overlapping sets of pCPUs, progressive filling); a VM's
//              hint is its share rounded up to whole guest cores, clamped to
//              [min-vcpus, min(vCPUs, max-vcpus)]
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
  double weight = 100.0;                 // policy weight, else the VM cgroup's (cpu.weight scale)
  FoldPolicy policy;
  bool cooperative = false;  // an agent is connected and acknowledges hints
  bool reachable = false;    // an agent is connected and said hello (acknowledging or not)
  // Set when the agent said in hello that auto hints do not fold its guest
  // (its kernel class, which the bench shows losing): the class's name.
  std::optional<std::string> autoFoldDeclinedClass;
};

// What allocation remembers about a VM from one tick to the next.
struct HintState {
  std::uint32_t hint = 0;          // the hint in force (0: none yet)
  std::uint32_t unfoldTarget = 0;  // smallest larger hint asked for during the current wait
  // Since when a larger hint has been asked for without a break; none: no wait.
  std::optional<std::chrono::steady_clock::time_point> unfoldAskedSince;
  friend bool operator==(const HintState&, const HintState&) = default;
};

struct AllocationConfig {
  std::chrono::milliseconds unfoldDelay{1000};  // 0: unfold at once
  double unfoldMarginCpus = 0.25;               // under contention, a share this close above the hint holds it
};

// When the earliest pending unfold falls due (for a decision then), if any.
std::optional<std::chrono::steady_clock::time_point> nextUnfoldDue(const AllocationConfig& config,
                                                                   const std::map<std::string, HintState>& state);

struct VmAllocation {
  std::string name;
  double demand = 0.0;                // as used: within 0..vCPUs
  double share = 0.0;                 // CPUs of the pool this VM is entitled to
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
                    const std::map<std::string, HintState>& previous, std::chrono::steady_clock::time_point now);

// One pool that every VM may use anywhere in.
Allocation allocate(const AllocationConfig& config, double capacity, const std::vector<VmDemand>& vms,
                    const std::map<std::string, HintState>& previous, std::chrono::steady_clock::time_point now);

}  // namespace vcpufold::hostd
