// SPDX-License-Identifier: GPL-2.0-or-later
// The contention bench's emulated VM is an instrument: these check that its
// guest model does what the bench's readers are told it does. Tasks share the
// preferred vCPUs in turns when they outnumber them, and only then switch;
// every kind of task makes progress; vCPUs that are not preferred do not run.

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "child_process.h"
#include "fixture_tree.h"
#include "unix_socket.h"

using vcpufold::testing::ChildProcess;
using vcpufold::testing::FixtureTree;
using vcpufold::testing::waitUntil;

namespace {

std::map<std::string, std::uint64_t> readStats(const std::string& path) {
  std::map<std::string, std::uint64_t> stats;
  std::ifstream in(path);
  std::string key;
  for (std::uint64_t value; in >> key >> value;) stats[key] = value;
  return stats;
}

// Run time (ns) of each thread of a process whose name is "CPU N" style: all of them.
std::uint64_t threadRunNs(pid_t pid, long tid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/schedstat");
  std::uint64_t run = 0;
  in >> run;
  return run;
}

// A thread's voluntary context switches: how often it went to sleep.
std::uint64_t voluntarySwitches(pid_t pid, long tid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/status");
  std::string key;
  std::uint64_t value = 0;
  while (status >> key)
    if (key == "voluntary_ctxt_switches:" && status >> value) return value;
  return 0;
}

// A QMP client on the VM's monitor socket, one line per message.
class MonitorClient {
 public:
  explicit MonitorClient(const std::string& path) : fd_(vcpufold::testing::connectUnixSocket(path)) {}
  ~MonitorClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool connected() const { return fd_ >= 0; }
  nlohmann::json ask(const std::string& command) {
    const std::string line = nlohmann::json{{"execute", command}}.dump() + "\n";
    if (::send(fd_, line.data(), line.size(), MSG_NOSIGNAL) < 0) return {};
    return readMessage();
  }
  nlohmann::json readMessage() {
    char chunk[4096];
    for (std::size_t newline; (newline = buffer_.find('\n')) == std::string::npos;) {
      const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0) return {};
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
    const std::size_t newline = buffer_.find('\n');
    const std::string line = buffer_.substr(0, newline);
    buffer_.erase(0, newline + 1);
    return nlohmann::json::parse(line, nullptr, false);
  }

 private:
  int fd_ = -1;
  std::string buffer_;
};

class EmulatedVm : public ::testing::Test {
 protected:
  std::unique_ptr<ChildProcess> start(const std::string& name, const std::string& workload, unsigned vcpus,
                                      unsigned tasks) {
    // The guest tree the VM publishes /proc/stat into and reads its preferred CPUs from.
    std::filesystem::create_directories(dir() + "/" + name + "-tree/sys/devices/system/cpu");
    std::filesystem::create_directories(dir() + "/" + name + "-tree/proc");
    auto vm = std::make_unique<ChildProcess>(
        VCPUFOLD_EMULATED_VM,
        std::vector<std::string>{"--name", name, "--dir", dir(), "--vcpus", std::to_string(vcpus), "--busy",
                                 std::to_string(tasks), "--workload", workload, "--seconds", "60", "--guest-tree",
                                 dir() + "/" + name + "-tree"},
        dir() + "/" + name + ".log");
    EXPECT_TRUE(waitUntil([&] { return !readStats(dir() + "/" + name + ".stats").empty(); }, 5000));
    return vm;
  }
  void prefer(const std::string& name, const std::string& cpus) {
    std::ofstream(dir() + "/" + name + "-tree/sys/devices/system/cpu/preferred") << cpus << "\n";
  }
  std::map<std::string, std::uint64_t> statsAfter(const std::string& name, int ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    return readStats(dir() + "/" + name + ".stats");
  }
  // The VM's vCPU threads by index, as QEMU's monitor names them
  // (query-cpus-fast), through `client`, greeted here; empty on failure.
  std::map<unsigned, long> vcpuThreads(MonitorClient& client) {
    if (!client.connected() || !client.readMessage().contains("QMP") ||
        !client.ask("qmp_capabilities").contains("return"))
      return {};
    const auto cpus = client.ask("query-cpus-fast");
    std::map<unsigned, long> threads;
    if (cpus.contains("return"))
      for (const auto& cpu : cpus["return"]) threads[cpu["cpu-index"].get<unsigned>()] = cpu["thread-id"].get<long>();
    return threads;
  }
  std::string dir() const { return work_.root().string(); }
  FixtureTree work_{""};
};

}  // namespace

TEST_F(EmulatedVm, TasksBeyondThePreferredVcpusTakeTurnsAndOnlyThenSwitch) {
  auto vm = start("vm", "compute", 4, 2);
  auto before = statsAfter("vm", 300);
  auto after = statsAfter("vm", 500);
  EXPECT_GT(after["operations"], before["operations"]);
  // (At start-up a task may wait a slice for a vCPU thread not yet running.)
  EXPECT_EQ(after["context_switches"] - before["context_switches"], 0u) << "2 tasks on 4 vCPUs do not share one";
  prefer("vm", "0");  // fold to one vCPU: the two tasks take turns on it
  before = statsAfter("vm", 300);
  after = statsAfter("vm", 1000);
  EXPECT_EQ(after["preferred"], 1u);
  EXPECT_GT(after["operations"], before["operations"]) << "folded tasks still progress";
  // Two tasks with 3 ms slices on one vCPU: about one switch every 3 ms.
  EXPECT_GE(after["context_switches"] - before["context_switches"], 100u);
}

TEST_F(EmulatedVm, EveryKindOfTaskMakesProgressFoldedOrNot) {
  for (const char* workload : {"spinlock", "pvspinlock", "message", "spinlock+compute"}) {
    SCOPED_TRACE(workload);
    const std::string name = std::string("vm-") + (workload[0] == 'p' ? "pv" : workload[0] == 'm' ? "msg" : "sl");
    auto vm = start(name + std::to_string(std::string(workload).size()), workload, 4, 6);
    const std::string id = name + std::to_string(std::string(workload).size());
    auto before = statsAfter(id, 300);
    auto after = statsAfter(id, 500);
    EXPECT_GT(after["operations"], before["operations"]) << "unfolded";
    prefer(id, "0-1");
    before = statsAfter(id, 300);
    after = statsAfter(id, 500);
    EXPECT_GT(after["operations"], before["operations"]) << "folded to two vCPUs";
    EXPECT_GT(after["context_switches"], before["context_switches"]) << "six tasks on two vCPUs";
  }
}

TEST_F(EmulatedVm, VcpusThatAreNotPreferredDoNotRun) {
  auto vm = start("vm", "compute", 4, 8);
  // The vCPU threads by index, as QEMU's monitor names them: the VM's other
  // threads (its control thread, the monitor's) are not vCPUs, and the
  // control thread alone ran 13 ms in 500 in a sanitizer build.
  MonitorClient client(dir() + "/vm.qmp");
  const auto vcpus = vcpuThreads(client);
  ASSERT_EQ(vcpus.size(), 4u) << "the monitor names four vCPU threads";
  prefer("vm", "0-1");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::map<unsigned, std::uint64_t> before;
  for (const auto& [index, tid] : vcpus) before[index] = threadRunNs(vm->pid(), tid);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  for (const auto& [index, tid] : vcpus) {
    const std::uint64_t ran = threadRunNs(vm->pid(), tid) - before[index];
    // Over 4% of the time is running; a halted vCPU runs none.
    if (index <= 1)
      EXPECT_GT(ran, 20'000'000u) << "preferred vCPU " << index << " runs the eight folded tasks";
    else
      EXPECT_LE(ran, 20'000'000u) << "vCPU " << index << " is not preferred and must not run";
  }
}

TEST_F(EmulatedVm, ASquareWaveScheduleChangesTheTasksOnTime) {
  std::filesystem::create_directories(dir() + "/wave-tree/sys/devices/system/cpu");
  std::filesystem::create_directories(dir() + "/wave-tree/proc");
  ChildProcess vm(VCPUFOLD_EMULATED_VM,
                  {"--name", "wave", "--dir", dir(), "--vcpus", "4", "--schedule", "square:3,1,1", "--seconds", "30",
                   "--guest-tree", dir() + "/wave-tree"},
                  dir() + "/wave.log");
  std::this_thread::sleep_for(std::chrono::milliseconds(2300));
  std::ifstream log(dir() + "/wave.tasks.log");
  std::vector<std::pair<long, unsigned>> changes;
  long at = 0;
  for (unsigned tasks = 0; log >> at >> tasks;) changes.emplace_back(at, tasks);
  ASSERT_GE(changes.size(), 4u) << "3, 1, 3, 1 in 2.3 s";
  // Each change against the schedule's own clock (the first line is written
  // as it starts), not against the change before: a wake-up the machine's
  // load makes late must not count twice (late, then the next one early).
  // Never early; late by the host's wake-up latency at most, and never by
  // the period's drift, which grows with every change.
  for (std::size_t k = 0; k < changes.size(); ++k) {
    EXPECT_EQ(changes[k].second, k % 2 == 0 ? 3u : 1u) << "change " << k;
    const double lateMs =
        static_cast<double>(changes[k].first - changes[0].first) / 1e6 - 500.0 * static_cast<double>(k);
    EXPECT_GE(lateMs, -2.0) << "change " << k << " came before its half period";
    EXPECT_LE(lateMs, 200.0) << "change " << k << " came " << lateMs << " ms after its half period";
  }
}

// The VM's control thread runs in its CPU group on the host, like QEMU's own
// threads: it must not wake often (that skews the host's weighted split, see
// bench/contention/README.md), yet follow a write to the preferred file or to
// the task count at once, not at its next 100 ms statistics step.
TEST_F(EmulatedVm, TheControlThreadSleepsBetweenEventsAndFollowsAWriteAtOnce) {
  auto vm = start("quiet", "compute", 2, 0);
  prefer("quiet", "0-1");  // the file now exists: watched from the next statistics step on
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // Two counts: the thread's own count of its ended sleeps (in the stats
  // file; the machine's load does not change it) and the kernel's count of
  // its voluntary switches, which also counts the sleeps of a statistics step
  // in the filesystem (the renames of its files: 30 to 60 more in two
  // seconds, and more on a busy machine). A poll every 10 ms alone gives 200.
  const auto stats = [&] { return readStats(dir() + "/quiet.stats"); };
  const auto beforeStats = stats();
  const auto beforeSwitches = voluntarySwitches(vm->pid(), vm->pid());
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const auto afterStats = stats();
  const auto switched = voluntarySwitches(vm->pid(), vm->pid()) - beforeSwitches;
  ASSERT_TRUE(beforeStats.contains("control_wakeups") && afterStats.contains("control_wakeups"));
  const auto woke = afterStats.at("control_wakeups") - beforeStats.at("control_wakeups");
  EXPECT_GE(woke, 10u) << "statistics every 100 ms (fewer when the machine holds the thread up)";
  EXPECT_LE(woke, 25u) << "about 10 steps a second, nothing else: no write came";
  EXPECT_LT(switched, 200u) << "no hidden poll every few milliseconds";

  const auto lastLogged = [&](const std::string& suffix) {
    std::ifstream log(dir() + "/quiet" + suffix);
    long at = 0, last = 0;
    for (unsigned count = 0; log >> at >> count;) last = at;
    return last;
  };
  const auto nowNs = [] {
    return static_cast<long>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
  };
  std::vector<double> followMs;
  for (int i = 0; i < 6; ++i) {
    const bool preferredWrite = i % 2 == 0;
    const long seen = lastLogged(preferredWrite ? ".preferred.log" : ".tasks.log");
    const long written = nowNs();
    if (preferredWrite)
      prefer("quiet", i % 4 == 0 ? "0" : "0-1");
    else
      std::ofstream(dir() + "/quiet.load") << (i % 4 == 1 ? 1 : 0) << "\n";
    ASSERT_TRUE(waitUntil([&] { return lastLogged(preferredWrite ? ".preferred.log" : ".tasks.log") != seen; }, 2000))
        << "write " << i;
    followMs.push_back(static_cast<double>(lastLogged(preferredWrite ? ".preferred.log" : ".tasks.log") - written) /
                       1e6);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));  // a new .load is watched from the next step
  }
  std::sort(followMs.begin(), followMs.end());
  EXPECT_LT(followMs[followMs.size() / 2], 25.0) << "median of 6 writes; waiting for the statistics step gives ~50";
}

TEST_F(EmulatedVm, TheMonitorsThreadsSleepUntilAClientWrites) {
  // QEMU's monitor waits in its main loop until a client writes; the emulated
  // monitor's threads sit in the VM's CPU group, where a thread waking on a
  // timer skews the host's weighted split between the VMs.
  auto vm = start("monitor", "compute", 2, 0);
  MonitorClient client(dir() + "/monitor.qmp");
  std::set<long> notMonitor{vm->pid()};
  for (const auto& [index, tid] : vcpuThreads(client)) notMonitor.insert(tid);
  ASSERT_EQ(notMonitor.size(), 3u) << "the control thread and two vCPU threads";
  std::vector<long> monitorThreads;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(vm->pid()) + "/task"))
    if (const long tid = std::stol(task.path().filename().string()); !notMonitor.contains(tid))
      monitorThreads.push_back(tid);
  ASSERT_EQ(monitorThreads.size(), 2u) << "one thread accepts clients, one serves this client";

  const auto slept = [&] {
    std::uint64_t total = 0;
    for (const long tid : monitorThreads) total += voluntarySwitches(vm->pid(), tid);
    return total;
  };
  const auto before = slept();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  // Waking every 100 ms to look for a stop gave about 40 here.
  EXPECT_LE(slept() - before, 2u) << "the monitor slept through two idle seconds";

  const auto asked = std::chrono::steady_clock::now();
  const auto name = client.ask("query-name");
  EXPECT_EQ(name["return"]["name"], "monitor") << "and still answers at once";
  EXPECT_LT(std::chrono::steady_clock::now() - asked, std::chrono::milliseconds(500));
}
