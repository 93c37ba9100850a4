// SPDX-License-Identifier: GPL-2.0-or-later
// Live migration between two "hosts" on this machine: two QEMU processes in
// two QMP directories, each watched by its own hostd (the QMP backend), the
// guest running its workload and the real agent. The source's QEMU migrates
// to the destination's (-incoming unix:...) and quits once the migration has
// completed, as libvirt does. Checked: the workload goes on; the destination
// hostd's hint is acknowledged within 2 of its ticks, then the guest is
// folded to its share; the
// agent answers the new host's hello; the source hostd forgets the VM; and
// when the destination hostd stops, the guest unfolds (no fold outlives the
// host that leased it). Skips, saying why, where QEMU cannot run.

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "child_process.h"
#include "fixture_tree.h"
#include "guest_folds.h"
#include "lab_cleanup.h"
#include "qemu_guest.h"
#include "status_table.h"

using vcpufold::testing::ChildProcess;
using vcpufold::testing::FixtureTree;
using vcpufold::testing::QemuGuest;
using vcpufold::testing::runShell;
using vcpufold::testing::statusRow;
using vcpufold::testing::waitUntil;

namespace {

const bool kLabCleanup = vcpufold::testing::registerLabCleanup();

constexpr int kBootMs = 180'000;
constexpr int kStepMs = 60'000;
constexpr int kTickMs = 1000;  // both hostds' interval_ms

// One "host": a QMP directory, its hostd and that hostd's control socket.
class MigrationHost {
 public:
  MigrationHost(const std::string& workDir, const std::string& name)
      : dir_(workDir + "/" + name), config_(dir_ + "/hostd.toml") {
    std::filesystem::create_directories(qmpDirectory());
    std::ofstream(config_) << "[hostd]\ninterval_ms = " << kTickMs
                           << "\n[inventory]\nbackend = \"qmp\"\nqmp_directory = \"" << qmpDirectory()
                           << "\"\n[metrics]\naddress = \"\"\n[control]\nsocket = \"" << dir_ << "/hostd.sock\"\n";
  }
  [[nodiscard]] std::string qmpDirectory() const { return dir_ + "/qemu-server"; }
  [[nodiscard]] std::string dir() const { return dir_; }
  void start() {
    hostd_ = std::make_unique<ChildProcess>(VCPUFOLD_HOSTD_BINARY, std::vector<std::string>{"--config", config_},
                                            dir_ + "/hostd.log");
  }
  std::optional<int> stop() {
    hostd_->signal(SIGTERM);
    return hostd_->waitExit(5000);
  }
  [[nodiscard]] std::string status() const {
    return runShell(std::string(VCPUFOLD_HOSTD_BINARY) + " --config " + config_ + " status");
  }
  [[nodiscard]] std::string log() const { return runShell("cat " + dir_ + "/hostd.log"); }

 private:
  std::string dir_;
  std::string config_;
  std::unique_ptr<ChildProcess> hostd_;
};

std::string guestRun(QemuGuest& guest, const std::string& command) {
  auto result = guest.run(command, kStepMs);
  return result ? result->output : std::string("<no answer>");
}

std::string effectiveCpus(QemuGuest& guest) {
  return guestRun(guest, "cat /sys/fs/cgroup/vcpufold.fold/cpuset.cpus.effective 2>/dev/null || echo none");
}

long counterOf(QemuGuest& guest) {
  try {
    return std::stol(guestRun(guest, "cat /tmp/e2e/counter"));
  } catch (const std::exception&) {
    return -1;
  }
}

}  // namespace

TEST(HostdMigration, TheDestinationHostTakesOverAndTheSourceForgets) {
  if (auto reason = vcpufold::testing::labUnavailableReason()) GTEST_SKIP() << "end-to-end tests skipped: " << *reason;
  std::string buildLog;
  auto image = vcpufold::testing::buildLabImage("agent-e2e",
                                                {VCPUFOLD_SOURCE_DIR "/tests/e2e/guest/agent-e2e.sh:/lab/agent-e2e.sh"},
                                                {VCPUFOLD_AGENT_BINARY}, buildLog);
  ASSERT_TRUE(image) << "building the guest image failed:\n" << buildLog;
  FixtureTree work("");
  const std::string dir = work.root().string();
  MigrationHost source(dir, "source");
  MigrationHost destination(dir, "destination");
  const std::string vm = "mig100";

  vcpufold::testing::QemuGuestSpec sourceSpec{*image, dir + "/source/guest", "4", "256M", "lab.run=agent-e2e"};
  sourceSpec.vmName = vm;
  sourceSpec.qmpDirectory = source.qmpDirectory();
  QemuGuest sourceGuest(sourceSpec);
  ASSERT_TRUE(sourceGuest.waitReady(kBootMs)) << "guest did not come up:\n" << sourceGuest.console();
  // The workload's own progress, besides its four CPU burners.
  guestRun(sourceGuest,
           "(n=0; while :; do n=$((n+1)); echo $n >/tmp/e2e/counter; sleep 0.2; done) >/dev/null 2>&1 </dev/null &");

  // Four burning vCPUs on this machine's 2 pCPUs: the source folds the guest
  // (to 2 on a quiet machine, fewer beside other load).
  source.start();
  std::string seen;
  ASSERT_TRUE(
      waitUntil([&] { return vcpufold::testing::foldedBelowAllFour(seen = effectiveCpus(sourceGuest)); }, kStepMs))
      << "the source did not fold the guest: " << seen << "\n"
      << source.log();

  // The destination QEMU waits for the migration; its hostd already watches it.
  vcpufold::testing::QemuGuestSpec destinationSpec = sourceSpec;
  destinationSpec.runDirectory = dir + "/destination/guest";
  destinationSpec.qmpDirectory = destination.qmpDirectory();
  destinationSpec.incoming = "unix:" + dir + "/migration.sock";
  QemuGuest destinationGuest(destinationSpec);
  ASSERT_TRUE(waitUntil([&] { return work.fs().exists("/migration.sock"); }, 30'000)) << "no -incoming socket";
  destination.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(3 * kTickMs));
  const std::string helloLine = "says hello";
  const std::string agentLogBefore = guestRun(sourceGuest, "cat /tmp/e2e/agent.log");

  auto answer =
      sourceGuest.qmp(R"({"execute":"migrate","arguments":{"uri":")" + destinationSpec.incoming + "\"}}", 10'000);
  ASSERT_TRUE(answer && answer->find("\"return\"") != std::string::npos) << answer.value_or("no answer");
  std::string migration;
  ASSERT_TRUE(waitUntil(
      [&] {
        migration = sourceGuest.qmp(R"({"execute":"query-migrate"})", 5000).value_or("");
        return migration.find("\"completed\"") != std::string::npos ||
               migration.find("\"failed\"") != std::string::npos;
      },
      120'000, 50))
      << migration;
  const auto completed = std::chrono::steady_clock::now();
  ASSERT_NE(migration.find("\"completed\""), std::string::npos) << migration;
  // Done with the source, as libvirt is after a successful migration.
  sourceGuest.qmp(R"({"execute":"quit"})", 5000);

  // The destination hints the guest within 2 of its ticks (the agent has
  // acknowledged the hint and is under host control), then folds it to its share.
  std::map<std::string, std::string> row;
  const auto sinceCompletedMs = [&completed] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - completed).count();
  };
  const bool hinted = waitUntil(
      [&] {
        row = statusRow(destination.status(), vm);
        return row["AGENT"] == "ready" && row["CONTROL"] == "host" && row["APPLIED"] != "-";
      },
      kStepMs, 50);
  const auto hintedMs = sinceCompletedMs();
  const bool folded = waitUntil(
      [&] {
        row = statusRow(destination.status(), vm);
        return vcpufold::testing::foldedBelowAllFour(row["APPLIED"]) && row["CONTROL"] == "host";
      },
      kStepMs, 50);
  const auto foldedMs = sinceCompletedMs();
  std::printf(
      "migration: %s\ndestination hostd: hint acknowledged %lld ms after completion, folded to %s after %lld ms\n",
      migration.c_str(), static_cast<long long>(hintedMs), row["APPLIED"].c_str(), static_cast<long long>(foldedMs));
  const auto destinationExit = destinationGuest.exitStatus();
  ASSERT_TRUE(hinted && folded)
      << destination.status() << destination.log() << "destination QEMU: "
      << (destinationExit ? "exited with status " + std::to_string(*destinationExit) : "running") << ", "
      << destinationGuest.qmp(R"({"execute":"query-status"})", 5000).value_or("no answer") << "\n"
      << runShell("tail -20 " + dir + "/destination/guest/qemu.log") << "\nthe destination's console:\n"
      << runShell("tail -40 " + dir + "/destination/guest/console.log") << "\nthe guest's agent:\n"
      << guestRun(destinationGuest, "tail -40 /tmp/e2e/agent.log")
      << "\nhostd's channel socket (bytes queued to QEMU):\n"
      << runShell("ss -xp 2>/dev/null | grep -F '" + vm + ".hint.sock' || true");
  EXPECT_LE(hintedMs, 2 * kTickMs) << destination.log();

  // The guest runs on, on the destination: its workload progresses and the
  // agent answered the new host's hello.
  ASSERT_TRUE(destinationGuest.waitReady(kStepMs));
  const long counter = counterOf(destinationGuest);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_GT(counterOf(destinationGuest), counter) << "the workload stopped";
  EXPECT_EQ(guestRun(destinationGuest, "for p in $(cat /tmp/e2e/burners); do kill -0 $p && echo alive; done"),
            "alive\nalive\nalive\nalive\n");
  const std::string agentLog = guestRun(destinationGuest, "cat /tmp/e2e/agent.log");
  const auto hellos = [&](const std::string& text) {
    std::size_t count = 0;
    for (auto at = text.find(helloLine); at != std::string::npos; at = text.find(helloLine, at + 1)) ++count;
    return count;
  };
  EXPECT_GT(hellos(agentLog), hellos(agentLogBefore)) << agentLog;

  // The source forgets the VM once its QEMU is gone.
  EXPECT_TRUE(waitUntil([&] { return statusRow(source.status(), vm).empty(); }, 5 * kTickMs)) << source.status();
  EXPECT_TRUE(source.stop() == 0);

  // No fold outlives the host that leased it: the destination hostd stops,
  // and the guest unfolds.
  EXPECT_TRUE(destination.stop() == 0);
  EXPECT_TRUE(
      waitUntil([&] { return !vcpufold::testing::foldedBelowAllFour(seen = effectiveCpus(destinationGuest)); }, 20'000))
      << seen;
  std::printf("source hostd:\n%s\ndestination hostd:\n%s\n", source.log().c_str(), destination.log().c_str());
}
