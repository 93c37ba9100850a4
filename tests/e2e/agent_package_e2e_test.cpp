// SPDX-License-Identifier: GPL-2.0-or-later
// The vcpufold-agent .deb as an operator gets it, in a Debian 12 guest that
// boots systemd and udev: udev starts the agent when its virtio port appears
// (nobody enables the unit), hints fold through systemd (AllowedCPUs= on the
// top-level slices, over D-Bus) and move the tasks, and `systemctl stop`
// leaves the guest unfolded. Skips, saying why, where QEMU, debootstrap or
// root is missing.

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "channel_client.h"
#include "child_process.h"
#include "lab_cleanup.h"
#include "qemu_guest.h"

using namespace vcpufold::protocol;
using vcpufold::testing::ChannelClient;
using vcpufold::testing::QemuGuest;
using vcpufold::testing::runShell;

namespace {

// Stale lab domains go before the tests start, and with this process on SIGTERM.
const bool kLabCleanup = vcpufold::testing::registerLabCleanup();

constexpr int kBootMs = 300'000;  // systemd under TCG, from a 60 MB initramfs
constexpr int kStepMs = 60'000;

class AgentPackageInSystemdGuest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto reason = vcpufold::testing::systemdGuestUnavailableReason())
      GTEST_SKIP() << "end-to-end tests skipped: " << *reason;
    runDirectory_ = std::filesystem::temp_directory_path() / ("vcpufold-pkg-e2e-" + std::to_string(::getpid()));
    std::filesystem::create_directories(runDirectory_);
    std::string log;
    const auto packages = vcpufold::testing::builtPackages(VCPUFOLD_DEB_DIR, log);
    ASSERT_TRUE(packages) << log;
    const auto started = std::chrono::steady_clock::now();
    const auto image = vcpufold::testing::buildSystemdGuestImage(packages->agent, false, log);
    ASSERT_TRUE(image) << log;
    std::printf("guest image built in %.0f s\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    guest_ = std::make_unique<QemuGuest>(
        vcpufold::testing::QemuGuestSpec{*image, runDirectory_, "2", "1536M", "systemd.show_status=0"});
    std::printf("guest under %s in %s\n", QemuGuest::accelerator().c_str(), runDirectory_.c_str());
    ASSERT_TRUE(guest_->waitReady(kBootMs)) << "guest did not come up:\n" << guest_->console();
  }

  void TearDown() override {
    if (HasFailure() && guest_) {
      if (auto log = guest_->run("journalctl -b --no-pager -u vcpufold-agent | tail -40", 20'000))
        std::printf("agent journal:\n%s\n", log->output.c_str());
    }
    guest_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(runDirectory_, ignored);
  }

  std::string guestOutput(const std::string& command) {
    auto result = guest_->run(command, kStepMs);
    return result ? result->output : "(no answer)";
  }

  // Polls a guest command until its output equals `expected`.
  bool waitForOutput(const std::string& command, const std::string& expected, std::string& seen) {
    return vcpufold::testing::waitUntil(
        [&] {
          seen = guestOutput(command);
          return seen == expected;
        },
        kStepMs, 500);
  }

  std::filesystem::path runDirectory_;
  std::unique_ptr<QemuGuest> guest_;
};

}  // namespace

TEST_F(AgentPackageInSystemdGuest, UdevStartsItSystemdFoldsStopUnfolds) {
  std::string seen;
  // udev, not an enablement, started the unit: it is static and the port's device unit wants it.
  ASSERT_TRUE(waitForOutput("systemctl is-active vcpufold-agent.service", "active\n", seen)) << seen;
  EXPECT_EQ(guestOutput("systemctl is-enabled vcpufold-agent.service"), "static\n");
  const std::string wantedBy = guestOutput("systemctl show -p WantedBy --value vcpufold-agent.service");
  EXPECT_NE(wantedBy.find(".device"), std::string::npos) << "not wanted by the port's device unit: " << wantedBy;

  // Two CPU-bound services to watch (in system.slice): the CPUs they last ran on, sorted.
  ASSERT_EQ(guestOutput("for u in burn1 burn2; do systemd-run --unit=$u --quiet sh -c 'while :; do :; done'; done; "
                        "echo $?"),
            "0\n");
  const std::string burnerCpus =
      "for u in burn1 burn2; do cut -d' ' -f39 /proc/$(systemctl show -p MainPID --value $u.service)/stat; done | "
      "sort | paste -sd' '";
  EXPECT_TRUE(waitForOutput(burnerCpus, "0 1\n", seen)) << "burners did not spread before folding: " << seen;

  ChannelClient host;
  ASSERT_TRUE(host.connect(guest_->hintSocket(), 10'000));
  auto hello = host.greetAgent(kStepMs);
  ASSERT_TRUE(hello) << "no hello from the packaged agent";
  ASSERT_TRUE(hello->agent);
  EXPECT_EQ(hello->agent->online, CpuSet::range(0, 1));
  // The shipped default on Debian 12's stock 6.1 kernel: its class as the
  // bench measured it (docs/guest-agent.md); an auto hint is answered, and
  // folds only where that class is folded by default.
  EXPECT_EQ(hello->agent->kernelClass, "stock-before-6.6");
  ASSERT_TRUE(host.send(Hint{1, 1, 120'000, HintPolicy::Auto, "e2e"}));
  auto ack = host.receiveType<Ack>(kStepMs);
  ASSERT_TRUE(ack);
  if (hello->agent->foldsOnAutoHints) {
    EXPECT_EQ(ack->applied, (CpuSet{0}));
  } else {
    EXPECT_EQ(ack->applied, CpuSet::range(0, 1)) << "not folded by default";
    EXPECT_EQ(ack->actuator, Actuator::None);
    EXPECT_EQ(guestOutput("systemctl show -p AllowedCPUs --value system.slice"), "\n");
  }
  // Policy fixed folds on every class: the folding below.
  ASSERT_TRUE(host.send(Hint{2, 1, 120'000, HintPolicy::Fixed, "e2e"}));
  ack = host.receiveType<Ack>(kStepMs);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->applied, (CpuSet{0}));
  EXPECT_EQ(ack->actuator, Actuator::Cpuset);
  // Through systemd: the slice's run-time property, and the kernel's view of it.
  EXPECT_EQ(guestOutput("systemctl show -p AllowedCPUs --value system.slice"), "0\n");
  EXPECT_EQ(guestOutput("cat /sys/fs/cgroup/system.slice/cpuset.cpus"), "0\n");
  EXPECT_TRUE(waitForOutput(burnerCpus, "0 0\n", seen)) << "burners not folded onto CPU 0: " << seen;
  // The housekeeping too, from inside the unit's sandbox: CPU 1 a partition of
  // its own (unbound kernel threads off it), the virtio devices' IRQs and the
  // unbound workqueues on CPU 0.
  const std::string irqsOnCpu0 = "grep -lx 0 /proc/irq/*/smp_affinity_list | wc -l";
  EXPECT_TRUE(waitForOutput("cat /sys/fs/cgroup/vcpufold.parked/cpuset.cpus.partition "
                            "/sys/fs/cgroup/vcpufold.parked/cpuset.cpus",
                            "isolated\n1\n", seen))
      << seen << guestOutput("journalctl -u vcpufold-agent.service --no-pager | tail -5");
  EXPECT_EQ(guestOutput("cat /sys/devices/virtual/workqueue/cpumask"), "1\n");
  EXPECT_EQ(guestOutput("for t in /proc/[0-9]*; do [ \"$(cat $t/comm)\" = rcu_preempt ] && "
                        "sed -n 's/^Cpus_allowed_list:.//p' $t/status; done"),
            "0\n");
  EXPECT_NE(guestOutput(irqsOnCpu0), "0\n") << "no IRQ steered: "
                                             << guestOutput("journalctl -u vcpufold-agent.service --no-pager | grep -i irq");

  // Stop the unit: systemd's ExecStopPost and the agent leave nothing folded.
  EXPECT_EQ(guestOutput("systemctl stop vcpufold-agent.service; echo $?"), "0\n");
  EXPECT_EQ(guestOutput("systemctl show -p AllowedCPUs --value system.slice"), "\n");
  // systemd drops the cpuset controller from the slice once no unit asks for it.
  EXPECT_EQ(guestOutput("cat /sys/fs/cgroup/system.slice/cpuset.cpus 2>/dev/null | tr -d '\\n'; echo ."), ".\n");
  EXPECT_EQ(guestOutput("ls /run/vcpufold/ 2>/dev/null | wc -l"), "0\n") << "state files left behind";
  EXPECT_EQ(guestOutput("test -e /sys/fs/cgroup/vcpufold.parked; echo $?"), "1\n") << "the partition left behind";
  EXPECT_EQ(guestOutput("cat /sys/devices/virtual/workqueue/cpumask"), "3\n");
  EXPECT_EQ(guestOutput(irqsOnCpu0), "0\n") << "every IRQ back to CPUs 0-1";
  EXPECT_TRUE(waitForOutput(burnerCpus, "0 1\n", seen)) << "burners did not spread after the stop: " << seen;
}
