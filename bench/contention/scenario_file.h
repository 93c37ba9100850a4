// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A contention scenario, read from a TOML file (bench/contention/scenarios/):
// the pCPUs the VMs share, the VMs (vCPUs, threads per core, weight, workload,
// demand schedule, whether an agent runs in it), how long to warm up and
// measure, and the modes to compare. Documented in bench/contention/README.md.

#include <optional>
#include <string>
#include <vector>

#include "modes.h"
#include "schedule.h"

namespace vcpufold::bench {

struct VmSpec {
  std::string name;
  unsigned vcpus = 4;
  unsigned threadsPerCore = 1;
  double weight = 100;                // hostd policy weight; the host CPU group gets the same
  std::string workload = "spinlock";  // a kind or a mix (guest_workload.h)
  Schedule schedule;                  // runnable tasks over the window; default constant:vcpus
  bool agent = true;                  // false: nobody folds it (an uncooperative guest)
};

struct Scenario {
  std::string name;  // "steady", or "steady/compute" for one of the file's workloads
  std::string description;
  std::string source;  // the file
  unsigned pcpus = 2;
  double warmupSeconds = 2;
  double durationSeconds = 4;
  double searchSeconds = 30;  // best-static and clairvoyant search budget
  // Runs of every mode when the command line does not say: a scenario whose
  // modes differ by less than its run-to-run spread needs more than the
  // default to tell them apart.
  std::optional<unsigned> repetitions;
  std::vector<Mode> modes;
  std::vector<VmSpec> vms;

  // Demand vectors over the window: where they change, and the tasks of every VM from there on.
  struct Phase {
    double from = 0, to = 0;
    std::vector<unsigned> tasks;
  };
  std::vector<Phase> phases() const;
  bool phased() const { return phases().size() > 1; }
};

// Parses a scenario file: one Scenario, or one per entry of `workloads`
// (VMs without a workload of their own take it). Every problem is reported
// at once, each naming its key; unknown keys are errors.
std::optional<std::vector<Scenario>> parseScenarioFile(const std::string& text, const std::string& source,
                                                       std::string& error);
std::optional<std::vector<Scenario>> readScenarioFile(const std::string& path, std::string& error);

}  // namespace vcpufold::bench
