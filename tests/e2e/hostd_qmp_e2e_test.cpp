// SPDX-License-Identifier: GPL-2.0-or-later
// Plain QEMU, as on Proxmox: a TCG guest started with the monitor and hint
// port arguments docs/hostd.md gives (-qmp unix:DIR/NAME.qmp, the
// org.vcpufold.hint.0 port on DIR/NAME.hint.sock), hinted by hostd's QMP
// backend from qmp_directory, while a second QMP client (as Proxmox's qm and
// pvestatd are) asks query-status every second and must always be answered:
// across hostd's first query, a hostd restart (which queries at once) and its
// periodic re-query. Skips, saying why, where QEMU cannot run.

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "child_process.h"
#include "fixture_tree.h"
#include "guest_folds.h"
#include "lab_cleanup.h"
#include "qemu_guest.h"

using vcpufold::testing::ChildProcess;
using vcpufold::testing::FixtureTree;
using vcpufold::testing::QemuGuest;
using vcpufold::testing::runShell;
using vcpufold::testing::waitUntil;

namespace {

const bool kLabCleanup = vcpufold::testing::registerLabCleanup();

constexpr int kBootMs = 180'000;
constexpr int kStepMs = 60'000;
constexpr int kAnswerMs = 3'000;  // what a Proxmox tool would wait for the monitor

// A second monitor client: query-status once a second until stopped.
class MonitorProbe {
 public:
  explicit MonitorProbe(QemuGuest& guest)
      : thread_([this, &guest] {
          while (!stop_) {
            const auto started = std::chrono::steady_clock::now();
            const auto answer = guest.qmp(R"({"execute":"query-status"})", kAnswerMs);
            const auto tookMs =
                std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started)
                    .count();
            ++asked_;
            if (!answer || answer->find("\"running\"") == std::string::npos) ++unanswered_;
            slowestMs_ = std::max<long>(slowestMs_, tookMs);
            std::this_thread::sleep_until(started + std::chrono::seconds(1));
          }
        }) {}
  ~MonitorProbe() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  int asked() const { return asked_; }
  int unanswered() const { return unanswered_; }
  long slowestMs() const { return slowestMs_; }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> asked_{0};
  std::atomic<int> unanswered_{0};
  std::atomic<long> slowestMs_{0};
  std::thread thread_;
};

}  // namespace

TEST(HostdPlainQemu, HintsThroughTheQmpBackendWhileAnotherClientKeepsTheMonitor) {
  if (auto reason = vcpufold::testing::labUnavailableReason()) GTEST_SKIP() << "end-to-end tests skipped: " << *reason;
  std::string log;
  auto image = vcpufold::testing::buildLabImage("agent-e2e",
                                                {VCPUFOLD_SOURCE_DIR "/tests/e2e/guest/agent-e2e.sh:/lab/agent-e2e.sh"},
                                                {VCPUFOLD_AGENT_BINARY}, log);
  ASSERT_TRUE(image) << "building the guest image failed:\n" << log;
  FixtureTree work("");
  const std::string dir = work.root().string();
  vcpufold::testing::QemuGuestSpec spec{*image, dir + "/guest", "4", "256M", "lab.run=agent-e2e"};
  spec.vmName = "plain100";
  spec.qmpDirectory = dir + "/qemu-server";
  QemuGuest guest(spec);
  ASSERT_TRUE(guest.waitReady(kBootMs)) << "guest did not come up:\n" << guest.console();

  MonitorProbe probe(guest);
  work.write("/hostd.toml", "[hostd]\ninterval_ms = 500\n[inventory]\nbackend = \"qmp\"\nqmp_directory = \"" +
                                spec.qmpDirectory.string() + "\"\n[metrics]\naddress = \"\"\n[control]\nsocket = \"" +
                                dir + "/hostd.sock\"\n");
  const auto startHostd = [&](const std::string& logName) {
    return std::make_unique<ChildProcess>(
        VCPUFOLD_HOSTD_BINARY, std::vector<std::string>{"--config", dir + "/hostd.toml"}, dir + "/" + logName);
  };
  const auto effectiveCpus = [&guest] {
    auto result = guest.run("cat /sys/fs/cgroup/vcpufold.fold/cpuset.cpus.effective 2>/dev/null || echo none", kStepMs);
    return result ? result->output : std::string("no answer");
  };
  const auto status = [&dir] {
    return runShell(std::string(VCPUFOLD_HOSTD_BINARY) + " --config " + dir + "/hostd.toml status");
  };

  // Four burning vCPUs on this machine's 2 pCPUs: hostd folds the guest (to 2
  // on a quiet machine, fewer beside other load).
  auto hostd = startHostd("hostd.log");
  std::string seen;
  EXPECT_TRUE(waitUntil([&] { return vcpufold::testing::foldedBelowAllFour(seen = effectiveCpus()); }, kStepMs))
      << "the guest was not folded: " << seen << "\n"
      << runShell("cat " + dir + "/hostd.log");
  EXPECT_NE(status().find("plain100"), std::string::npos) << status();

  // A restarted hostd knows nothing and queries the monitor at once.
  hostd->signal(SIGTERM);
  EXPECT_EQ(hostd->waitExit(5000), 0);
  hostd = startHostd("hostd2.log");
  EXPECT_TRUE(waitUntil([&] { return status().find("plain100") != std::string::npos; }, kStepMs))
      << runShell("cat " + dir + "/hostd2.log");
  // Past hostd's 30 s re-query, still folded, the monitor still answering.
  std::this_thread::sleep_for(std::chrono::seconds(32));
  EXPECT_TRUE(vcpufold::testing::foldedBelowAllFour(seen = effectiveCpus())) << seen;
  probe.stop();
  EXPECT_GE(probe.asked(), 30);
  EXPECT_EQ(probe.unanswered(), 0) << "of " << probe.asked() << " query-status";
  EXPECT_LT(probe.slowestMs(), kAnswerMs);
  std::printf("second monitor client: %d query-status, slowest answer %ld ms\n", probe.asked(), probe.slowestMs());

  // hostd stops: the lease runs out and the guest is left unfolded.
  hostd->signal(SIGTERM);
  EXPECT_EQ(hostd->waitExit(5000), 0);
  EXPECT_TRUE(waitUntil([&] { return !vcpufold::testing::foldedBelowAllFour(seen = effectiveCpus()); }, 20'000))
      << seen;
  const std::string hostdLog = runShell("cat " + dir + "/hostd.log " + dir + "/hostd2.log");
  EXPECT_NE(hostdLog.find("plain100: hint"), std::string::npos) << hostdLog;
}
