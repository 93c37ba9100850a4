// SPDX-License-Identifier: GPL-2.0-or-later
// vcpufold-emulated-vm: a process that looks like a VM to the host scheduler
// and to hostd, for the contention bench and the integration tests (not part
// of the product). See usage() and bench/contention/README.md.

#include <algorithm>
#include <bit>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "file_write_watch.h"
#include "guest_tree.h"
#include "guest_workload.h"
#include "qmp_responder.h"
#include "schedule.h"

namespace {

volatile std::sig_atomic_t stopping = 0;
void onSignal(int) { stopping = 1; }

void usage() {
  std::fprintf(stderr,
               "usage: vcpufold-emulated-vm --name NAME --dir DIR --vcpus N [--busy K] [--seconds S]\n"
               "                            [--workload KIND[+KIND...]] [--guest-tree ROOT]\n"
               "  Runs N vCPU threads and K guest tasks (default 0, at most 256) on them, scheduled as a\n"
               "  guest kernel would: one run queue, a 3 ms slice, the tasks taking turns on the preferred\n"
               "  vCPUs when there are more tasks than those. KIND: compute, spinlock, pvspinlock (paravirt\n"
               "  locks), message (producer/consumer pairs); a mix such as spinlock+compute gives the tasks\n"
               "  the kinds in turn.\n"
               "  Serves QMP on DIR/NAME.qmp (query-cpus-fast gives the threads' host ids); while\n"
               "  DIR/NAME.qmp-mute exists it reads commands and answers none (a hung QEMU monitor).\n"
               "  Reads the task count from DIR/NAME.load when that file exists (changeable at run time),\n"
               "  or follows --schedule: constant:N, step:FROM,TO,AT_S, square:HIGH,LOW,PERIOD_S or\n"
               "  walk:START,MIN,MAX,EVERY_S,SEED (times from the VM's start).\n"
               "  Its control thread wakes for a write to either file it follows (DIR/NAME.load, the guest\n"
               "  tree's preferred file), the schedule's next step and every 100 ms, never polling faster.\n"
               "  Writes DIR/NAME.stats every 100 ms (monotonic_ns: when; operations, run_ns, wait_ns,\n"
               "  preferred, context_switches, control_wakeups: the control thread's sleeps ended) and appends\n"
               "  each change of preferred vCPUs and of the task count to DIR/NAME.preferred.log and\n"
               "  DIR/NAME.tasks.log (\"MONOTONIC_NS COUNT\").\n"
               "  With --guest-tree: publishes ROOT/proc/stat (steal = the threads' run-queue delay) and\n"
               "  ROOT/proc/loadavg (the runnable tasks), and\n"
               "  follows ROOT/sys/devices/system/cpu/preferred, for a vcpufold-agent run with --root ROOT.\n");
}

long monotonicNs() {
  return static_cast<long>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

unsigned readTaskCount(const std::string& path, unsigned fallback) {
  std::ifstream file(path);
  unsigned tasks = 0;
  return file >> tasks ? tasks : fallback;
}

}  // namespace

int main(int argc, char** argv) {
  std::string name, dir, workloadName = "compute", treeRoot, scheduleText;
  unsigned vcpus = 1, busy = 0, seconds = 3600;
  try {
    for (int i = 1; i + 1 < argc; i += 2) {
      const std::string flag = argv[i];
      const std::string value = argv[i + 1];
      if (flag == "--name")
        name = value;
      else if (flag == "--dir")
        dir = value;
      else if (flag == "--vcpus")
        vcpus = static_cast<unsigned>(std::stoul(value));
      else if (flag == "--busy")
        busy = static_cast<unsigned>(std::stoul(value));
      else if (flag == "--seconds")
        seconds = static_cast<unsigned>(std::stoul(value));
      else if (flag == "--workload")
        workloadName = value;
      else if (flag == "--guest-tree")
        treeRoot = value;
      else if (flag == "--schedule")
        scheduleText = value;
      else
        throw std::invalid_argument(flag);
    }
  } catch (const std::exception&) {
    usage();
    return 2;
  }
  std::vector<vcpufold::bench::WorkloadKind> kinds;
  if (name.empty() || dir.empty() || vcpus < 1 || vcpus > 64 || busy > vcpufold::bench::GuestWorkload::kMaxTasks ||
      !vcpufold::bench::parseWorkloadMix(workloadName, kinds)) {
    usage();
    return 2;
  }
  std::optional<vcpufold::bench::Schedule> schedule;
  if (!scheduleText.empty()) {
    std::string error;
    schedule = vcpufold::bench::parseSchedule(scheduleText, error);
    if (!schedule) {
      std::fprintf(stderr, "vcpufold-emulated-vm: %s\n", error.c_str());
      usage();
      return 2;
    }
    busy = vcpufold::bench::tasksAt(*schedule, 0);
  }
  std::signal(SIGTERM, onSignal);
  std::signal(SIGINT, onSignal);

  vcpufold::bench::GuestWorkload workload(kinds, vcpus);
  workload.setRunnableTasks(busy);
  workload.start();
  const std::string mutePath = dir + "/" + name + ".qmp-mute";
  vcpufold::bench::QmpResponder qmp(
      name,
      [&workload] {
        std::vector<long> tids;
        for (const auto& counter : workload.counters()) tids.push_back(counter.tid);
        return tids;
      },
      [mutePath] { return std::ifstream(mutePath).good(); });
  const std::string qmpPath = dir + "/" + name + ".qmp";
  if (!qmp.listen(qmpPath)) {
    std::perror(qmpPath.c_str());
    return 1;
  }
  std::optional<vcpufold::bench::GuestTree> tree;
  if (!treeRoot.empty()) tree.emplace(treeRoot, vcpus);

  const std::string base = dir + "/" + name;
  std::ofstream preferredLog(base + ".preferred.log", std::ios::app);
  std::ofstream tasksLog(base + ".tasks.log", std::ios::app);
  tasksLog << monotonicNs() << ' ' << workload.runnableTasks() << std::endl;
  std::uint64_t preferred = vcpus == 64 ? ~0ull : (1ull << vcpus) - 1;
  preferredLog << monotonicNs() << ' ' << std::popcount(preferred) << std::endl;
  // The control thread sleeps until something happens: a write to the task
  // count file or to the guest's preferred file, the schedule's next step, or
  // the next 100 ms statistics step. The bench moves this thread out of the
  // VM's CPU group where cgroup v1 lets it; where it stays (v2), a thread
  // there that wakes often skews the host's weighted split between the
  // groups (bench/contention/README.md).
  std::vector<std::string> followed;
  if (!schedule) followed.push_back(base + ".load");
  if (tree) followed.push_back(tree->preferredPath());
  vcpufold::bench::FileWriteWatch watch(followed);
  constexpr auto kStatsEvery = std::chrono::milliseconds(100);
  const auto started = std::chrono::steady_clock::now();
  const auto deadline = started + std::chrono::seconds(seconds);
  auto nextStats = started;
  while (!stopping && std::chrono::steady_clock::now() < deadline) {
    auto wake = std::min(nextStats, deadline);
    if (schedule) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      if (const auto step = vcpufold::bench::nextStepAfter(*schedule, elapsed))
        wake = std::min(wake, started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                            std::chrono::duration<double>(*step)));
    }
    watch.waitForWrite(wake);
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - started).count();
    bool tasksChanged = false;
    if (const unsigned tasks = schedule ? vcpufold::bench::tasksAt(*schedule, elapsed)
                                        : readTaskCount(base + ".load", workload.runnableTasks());
        tasks != workload.runnableTasks()) {
      workload.setRunnableTasks(tasks);
      tasksLog << monotonicNs() << ' ' << workload.runnableTasks() << std::endl;
      tasksChanged = true;
    }
    if (tree) {
      if (auto mask = tree->readPreferred(); mask && *mask != preferred) {
        preferred = *mask;
        workload.setPreferred(preferred);
        preferredLog << monotonicNs() << ' ' << std::popcount(preferred) << std::endl;
      }
    }
    // Every 100 ms, and at once when the task count changed: a guest kernel's
    // procs_running moves the moment the tasks do.
    if (now < nextStats && !tasksChanged) continue;
    if (now >= nextStats) {
      nextStats += kStatsEvery;
      if (nextStats <= now) nextStats = now + kStatsEvery;  // after a long stall, no burst of catch-up steps
      watch.rewatch();
    }
    const auto counters = workload.counters();
    std::vector<vcpufold::bench::ThreadTimes> times;
    std::uint64_t operations = 0, runNs = 0, waitNs = 0;
    for (const auto& counter : counters) {
      times.push_back(vcpufold::bench::readThreadTimes(counter.tid));
      operations += counter.operations;
      runNs += times.back().runNs;
      waitNs += times.back().waitNs;
    }
    if (tree) tree->publishProcStat(times, workload.runnableTasks());
    {
      std::ofstream stats(base + ".stats.new", std::ios::trunc);
      stats << "monotonic_ns " << monotonicNs() << "\noperations " << operations << "\nrun_ns " << runNs << "\nwait_ns "
            << waitNs << "\npreferred " << std::popcount(preferred) << "\ncontext_switches "
            << workload.contextSwitches() << "\ncontrol_wakeups " << watch.wakeups() << "\n";
    }
    std::rename((base + ".stats.new").c_str(), (base + ".stats").c_str());
  }
  workload.stop();
  qmp.stop();
  return 0;
}
