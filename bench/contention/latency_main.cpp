// SPDX-License-Identifier: GPL-2.0-or-later
// vcpufold-bench-latency: how long a demand change takes to reach a guest's
// preferred mask, in both directions, split into its stages. Two VMs on 2
// pCPUs with real agents and a real hostd: vm-a runs 2 tasks; vm-b wakes with
// 4 (the pool is contended: hostd folds vm-a to 1) and goes idle again (vm-a
// may unfold, once hostd's unfold delay has passed). Repeated; the stages come
// from the monotonic times the agents and hostd log at debug level:
//   report  the change until vm-b's agent sent its status (two samples of
//           procs_running, then at once)
//   decide  that status until hostd's decision that changed vm-a's hint
//           (the debounce, and for an unfold the unfold delay)
//   send    the decision until vm-a's agent read the hint
//   apply   vm-a's agent choosing and writing the CPUs
//   total   the change until the mask was applied
// By default the VMs are emulated (the bench's cpuset); with --lab they are
// TCG guests under libvirt running the real agent on a real guest kernel
// (latency_runs.h).

#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>

#include "latency_runs.h"

int main(int argc, char** argv) {
  using namespace vcpufold::bench;
  CLI::App app{
      "Measures the time from a demand change in one VM to its neighbour's applied preferred mask, for folds and "
      "unfolds, split into report, decide, send and apply (ms: median, p95, max). Emulated VMs by default; --lab "
      "runs two TCG guests under libvirt (qemu:///system) instead. Needs root.",
      "vcpufold-bench-latency"};
  FleetBinaries binaries{VCPUFOLD_EMULATED_VM, VCPUFOLD_AGENT_BINARY, VCPUFOLD_HOSTD_BINARY};
  LatencyOptions options;
  bool lab = false;
  std::optional<unsigned> repetitions;
  options.work = "/var/tmp/vcpufold-bench/latency";
  app.add_flag("--lab", lab, "real guest kernels: two TCG guests under libvirt, hostd against qemu:///system");
  app.add_option("--work", options.work, "run directory (logs); --lab adds /lab")->capture_default_str();
  app.add_option("--repetitions", repetitions, "fold and unfold changes to time, each (default 30; 10 with --lab)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--tick-ms", options.tickMs,
                 "hostd's tick and the emulated agents' interval (the lab's agents keep their default, 1000 ms)")
      ->capture_default_str()
      ->check(CLI::Range(100, 60000));
  CLI11_PARSE(app, argc, argv);
  options.repetitions = repetitions.value_or(lab ? 10 : 30);
  if (lab) options.work += "/lab";

  try {
    const LatencyTable table = lab ? measureLabLatency(binaries, options) : measureEmulatedLatency(binaries, options);
    std::printf("%s", table.text.c_str());
    std::printf(
        "report and decide are timed only where the change was reported early (else the decision was a "
        "tick's)\n");
    return table.bothDirectionsTimed ? 0 : 1;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "vcpufold-bench-latency: %s\n", error.what());
    return 1;
  }
}
