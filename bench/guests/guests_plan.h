// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// What the real-guest bench runs and how a run's numbers are read: the
// workloads and their emulated counterparts, the modes, the interleaved order
// of the runs, the fixed mode's size, and the measured unit from a guest's
// unit log. Pure: no process, no I/O (unit-tested).

#include <optional>
#include <string>
#include <vector>

namespace vcpufold::bench {

struct GuestWorkload {
  std::string name;         // as /lab/unit in the guest knows it
  unsigned size = 0;        // the unit's size: hackbench loops, files per task, loop iterations
  std::string emulated;     // the emulated bench's steady workload it is set beside
  std::string description;  // for the report
};

// hackbench-pipe, hackbench-socket, files, compute.
const std::vector<GuestWorkload>& guestWorkloads();
const GuestWorkload* findGuestWorkload(const std::string& name);

// How the guests fold: the agent's actuator on one guest kernel. `cpuset`
// (Debian 12's stock 6.1 cloud kernel), `cpuset-6.12` (Debian's stock 6.12
// cloud kernel, the series Debian 13 ships) and `kernel` (preferred CPUs on
// the patched kernel) are the ones the targets are set for; `cpuset-patched`
// runs the cpuset actuator on the patched kernel, so that a difference
// between kernels can be put down to the kernel or to the actuator.
struct GuestActuator {
  std::string name;            // as --actuators names it and the report shows it
  std::string agentActuator;   // the agent's --actuator
  bool patchedKernel = false;  // the patched kernel of kernel-patches/6.12, else a stock Debian kernel
  bool targeted = true;        // the targets table has rows for it
  // The Debian meta package whose kernel the guests boot (stock kernels
  // only); empty: the lab image's default, linux-image-cloud-amd64.
  std::string cloudKernel;
  // The cpuset actuator steers the guest's housekeeping (the agent's
  // default); the `-unsteered` variants turn it off, to measure what it does.
  bool steerHousekeeping = true;
  // The agents fold on auto hints whatever their kernel class (fold =
  // "always"), so that folding itself is measured on every kernel; the
  // `-shipped` variants keep the agent's shipped default (by-evidence), which
  // on the stock kernels answers auto hints with all CPUs: what a user of
  // such a guest gets (mode fixed, an explicit policy, still folds).
  bool agentFoldsAlways = true;
  // Diagnostic variants that split what vcpufold's presence costs: the
  // agent's runnable-task sampling period (0: its default, 50 ms), and no
  // agents at all (hostd alone runs in modes vcpufold and fixed).
  unsigned agentSampleMs = 0;
  bool agents = true;
  // The agent runs in a cgroup of its own (`cpuset-agent-cgroup`), as under
  // systemd, whose unit holds it: folded with the other cgroups onto the
  // preferred CPUs, where the lab's agent otherwise runs in the root cgroup,
  // which the parked partition confines to the same CPUs.
  bool agentInOwnCgroup = false;
};
// cpuset, cpuset-6.12, kernel, cpuset-patched, cpuset-unsteered, cpuset-6.12-unsteered,
// cpuset-shipped, cpuset-6.12-shipped, cpuset-shipped-sample-1s, cpuset-hostd-only, cpuset-agent-cgroup.
const std::vector<GuestActuator>& guestActuators();
const GuestActuator* findGuestActuator(const std::string& name);
// The guest payload's command that starts a variant's agents (`/lab/agent
// start [ACT [OPTION...]]`, tests/lab/guest/guests-bench.sh); empty for a
// variant without agents.
std::string agentStartCommand(const GuestActuator& variant);

enum class GuestMode { Unfolded, Vcpufold, Fixed };
inline constexpr GuestMode kGuestModes[] = {GuestMode::Unfolded, GuestMode::Vcpufold, GuestMode::Fixed};
const char* guestModeName(GuestMode mode);
std::optional<GuestMode> parseGuestMode(const std::string& name);

// The fixed mode's size: each guest's equal share of the pCPUs, rounded up to
// whole vCPUs (static-fair's rule), between 1 and the guest's vCPUs.
unsigned fixedShareVcpus(unsigned pcpus, unsigned guests, unsigned vcpus);

struct PlannedRun {
  unsigned repetition = 0;  // 1-based
  std::string workload;
  GuestMode mode = GuestMode::Unfolded;
};
// Every repetition in turn; in each, every workload; for each, every mode:
// the modes of one workload run back to back, so slow drift of the machine
// touches them alike, in an order that changes from cell to cell (a Williams
// square of the six orders) so that no mode always runs first or always
// follows the same mode.
std::vector<PlannedRun> interleavedPlan(unsigned repetitions, const std::vector<std::string>& workloads);

// A guest's unit log (/lab/stop: "START END" uptime seconds per unit, in the
// order they ended): the seconds the second unit took. The first warms the
// guest up (TCG translates the code it first runs) and overlaps the modes'
// start; every guest keeps running units until all have ended their second,
// so the second always runs against a full load. nullopt when there is none
// or a unit failed.
std::optional<double> measuredUnitSeconds(const std::string& unitLog);
// When that unit ran: its start and end in the guest's uptime (s).
struct UnitWindow {
  double start = 0, end = 0;
};
std::optional<UnitWindow> measuredUnitWindow(const std::string& unitLog);

}  // namespace vcpufold::bench
