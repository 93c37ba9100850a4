// SPDX-License-Identifier: GPL-2.0-or-later
// vcpufold-hostd against real TCG guests under libvirt
// (qemu:///system): two 4-vCPU guests burn every vCPU on this machine's
// pCPUs; --oneshot must list both, their run-queue delay and the hints it
// would send, and the daemon must keep its VMs while libvirtd restarts and
// keep sampling while one guest's QEMU main loop does not run.
// Skips, saying why, where QEMU or libvirt cannot run.

#include <gtest/gtest.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "child_process.h"
#include "fixture_tree.h"
#include "guest_control.h"
#include "lab_cleanup.h"
#include "qemu_guest.h"

using vcpufold::testing::runShell;
using vcpufold::testing::waitUntil;

namespace {

// Stale lab domains go before the tests start, and with this process on SIGTERM.
const bool kLabCleanup = vcpufold::testing::registerLabCleanup();

const std::string kGuests = VCPUFOLD_SOURCE_DIR "/tests/lab/libvirt/guests.sh";

// Missing-input episodes hostd's log says started.
std::size_t heldEpisodesStarted(const std::string& log) {
  static const std::regex started("inputs missing: .*; holding .* for up to [0-9]+ ms");
  return static_cast<std::size_t>(
      std::distance(std::sregex_iterator(log.begin(), log.end(), started), std::sregex_iterator()));
}

// How long each missing-input episode the log says ended lasted.
std::vector<double> heldEpisodeLengthsMs(const std::string& log) {
  static const std::regex ended("inputs complete again after ([0-9]+) ms");
  std::vector<double> lengths;
  for (auto match = std::sregex_iterator(log.begin(), log.end(), ended); match != std::sregex_iterator(); ++match)
    lengths.push_back(std::stod((*match)[1].str()));
  return lengths;
}

// Stops one thread of another process, and no other, while it lives: a
// ptrace stop is per thread. Here the thread is a QEMU's main loop, left
// unrun as an overloaded host's scheduler can leave it for seconds.
class ThreadStop {
 public:
  explicit ThreadStop(pid_t tid) : tid_(tid) {
    if (ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0) return;
    seized_ = true;
    int status = 0;
    stopped_ = ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) == 0 && waitpid(tid, &status, __WALL) == tid &&
               WIFSTOPPED(status);
  }
  ~ThreadStop() {
    if (seized_) ptrace(PTRACE_DETACH, tid_, nullptr, nullptr);
  }
  ThreadStop(const ThreadStop&) = delete;
  ThreadStop& operator=(const ThreadStop&) = delete;
  [[nodiscard]] bool stopped() const { return stopped_; }

 private:
  pid_t tid_;
  bool seized_ = false;
  bool stopped_ = false;
};

class HostdUnderLibvirt : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto reason = vcpufold::testing::labUnavailableReason())
      GTEST_SKIP() << "end-to-end tests skipped: " << *reason;
    if (std::system("command -v libvirtd >/dev/null 2>&1") != 0)
      GTEST_SKIP() << "end-to-end tests skipped: libvirtd is not installed (scripts/install-deps.sh installs it)";
    // The guests boot first and burn only when both are up (lab.hold): a TCG
    // guest starved by a burning neighbour while it boots can hang.
    const std::string started = runShell("LAB_ARGS=lab.hold " + kGuests + " start burn vcpufold-e2e-a vcpufold-e2e-b");
    started_ = true;
    ASSERT_EQ(started.find("error"), std::string::npos) << started;
    for (const char* name : {"vcpufold-e2e-a", "vcpufold-e2e-b"}) {
      vcpufold::testing::GuestControl control(vcpufold::testing::labDirectory() + "/libvirt/" + name + ".ctl.sock");
      ASSERT_TRUE(control.waitReady(180'000)) << name << " did not boot";
      const auto go = control.run("mkdir -p /tmp/lab && touch /tmp/lab/go", 30'000);
      ASSERT_TRUE(go && go->status == 0) << name << ": " << (go ? go->output : "no answer");
    }
  }
  void TearDown() override {
    if (started_) runShell(kGuests + " stop vcpufold-e2e-a vcpufold-e2e-b");
  }
  bool started_ = false;
};

}  // namespace

TEST_F(HostdUnderLibvirt, OneshotThenDaemonThroughALibvirtdRestart) {
  // TCG guests boot in seconds; poll until both burn (their vCPUs wait for
  // pCPUs).
  // VM, VCPUS, POOL (nothing pinned: the whole pool), POLICY, AGENT, DEMAND, DELAY, WEIGHT, SHARE, HINT.
  const std::regex row(
      R"(vcpufold-e2e-[ab]\s+4\s+[0-9,-]+\s+auto\s+\S+\s+([0-9.]+)\s+([0-9]+)%\s+\S+\s+([0-9.]+)\s+([0-9]+))");
  std::string output;
  int rows = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
  while (std::chrono::steady_clock::now() < deadline) {
    output = runShell(std::string(VCPUFOLD_HOSTD_BINARY) + " --connect qemu:///system --oneshot");
    rows = 0;
    for (std::sregex_iterator it(output.begin(), output.end(), row), end; it != end; ++it) {
      const double demand = std::stod((*it)[1]);
      const int delayPercent = std::stoi((*it)[2]);
      if (demand > 2.0 && delayPercent >= 30) ++rows;
    }
    if (rows == 2) break;
    std::this_thread::sleep_for(std::chrono::seconds(2));
  }
  std::printf("%s", output.c_str());
  EXPECT_EQ(rows, 2) << "both guests with demand above 2 vCPUs and at least "
                        "30% run-queue delay:\n"
                     << output;
  EXPECT_NE(output.find(": contention"), std::string::npos) << output;
  EXPECT_NE(output.find("vcpufold-e2e-a: contention"), std::string::npos) << output;
  // One guest has an explicit channel path, the other libvirt's generated one.
  EXPECT_NE(output.find("vcpufold-e2e-a.hint.sock"), std::string::npos) << output;
  EXPECT_NE(output.find("/var/lib/libvirt/qemu/channel/target/"), std::string::npos) << output;

  // Then the daemon, which must keep its VMs while libvirtd restarts (one
  // scenario: booting the guests is the slow part).
  vcpufold::testing::FixtureTree work("");
  const std::string dir = work.root().string();
  const std::string hostd = VCPUFOLD_HOSTD_BINARY;
  const std::string control = " --control-socket " + dir + "/hostd.sock";
  vcpufold::testing::ChildProcess daemon(
      hostd, {"--connect", "qemu:///system", "--metrics", "", "--control-socket", dir + "/hostd.sock"},
      dir + "/hostd.log");
  auto statusShowsBoth = [&] {
    const std::string status = runShell(hostd + control + " status");
    return status.find("vcpufold-e2e-a ") != std::string::npos && status.find("vcpufold-e2e-b ") != std::string::npos;
  };
  ASSERT_TRUE(waitUntil(statusShowsBoth, 30000, 250)) << runShell("cat " + dir + "/hostd.log");

  // libvirtd goes away: hostd keeps the VMs it knows and says why.
  runShell(
      "pkill -x libvirtd; for i in $(seq 50); do pgrep -x libvirtd "
      ">/dev/null || break; sleep 0.1; done");
  EXPECT_TRUE(waitUntil(
      [&] { return runShell("cat " + dir + "/hostd.log").find("keeping the last known VMs") != std::string::npos; },
      15000, 250))
      << runShell("cat " + dir + "/hostd.log");
  EXPECT_TRUE(statusShowsBoth()) << "the VMs run on without libvirtd";

  // libvirtd comes back: hostd reconnects by itself.
  runShell(VCPUFOLD_SOURCE_DIR "/tests/lab/libvirt/libvirtd.sh");
  EXPECT_TRUE(waitUntil(
      [&] { return runShell("cat " + dir + "/hostd.log").find("answers again") != std::string::npos; }, 60000, 250))
      << runShell("cat " + dir + "/hostd.log");
  EXPECT_TRUE(statusShowsBoth());

  // Guest a's QEMU main loop stops for 12 s (its vCPU threads may run on).
  // libvirt's vCPU statistics ask that main loop through QEMU's monitor;
  // hostd samples vCPUs from /proc, so its snapshots keep coming and no
  // input goes missing, for either VM.
  const std::string logBefore = runShell("cat " + dir + "/hostd.log");
  const std::string pidText = runShell("cat /run/libvirt/qemu/vcpufold-e2e-a.pid");
  const pid_t qemu = static_cast<pid_t>(std::atoi(pidText.c_str()));
  ASSERT_GT(qemu, 0) << pidText;
  {
    ThreadStop mainLoop(qemu);
    ASSERT_TRUE(mainLoop.stopped()) << "cannot stop QEMU's main thread " << qemu;
    const std::string state =
        runShell("cut -d' ' -f3 /proc/" + std::to_string(qemu) + "/task/" + std::to_string(qemu) + "/stat");
    EXPECT_EQ(state.substr(0, 1), "t") << "the main thread in a tracing stop: " << state;
    std::this_thread::sleep_for(std::chrono::seconds(12));
    EXPECT_TRUE(statusShowsBoth());
  }
  // A hold that waits for the stopped main loop lasts the whole stop (about
  // 9 s past the 3 s a snapshot may take); a busy machine can still make one
  // snapshot late for a moment, which holds briefly and is no failure.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const std::string logAfter = runShell("cat " + dir + "/hostd.log");
  ASSERT_GE(logAfter.size(), logBefore.size());
  const std::string duringStall = logAfter.substr(logBefore.size());
  EXPECT_EQ(heldEpisodesStarted(duringStall), heldEpisodeLengthsMs(duringStall).size())
      << "every hold ended within 2 s of the stop's end\n"
      << duringStall;
  for (const double heldMs : heldEpisodeLengthsMs(duringStall)) EXPECT_LT(heldMs, 2500.0) << duringStall;
  daemon.signal(SIGTERM);
  EXPECT_EQ(daemon.waitExit(5000), 0);
}
