// SPDX-License-Identifier: GPL-2.0-or-later
// The vcpufold-agent .deb as an operator gets it, in a Debian 12 guest (its
// stock 6.1 cloud kernel) and a Debian 13 guest (its stock 6.12 cloud kernel)
// that boot systemd and udev: the same package installs in both; udev starts
// the agent when its virtio port appears (nobody enables the unit), hints fold
// through systemd (AllowedCPUs= on the top-level slices, over D-Bus) and move
// the tasks, an upgrade restarts it, and `systemctl stop` leaves the guest
// unfolded. Skips, saying why, where QEMU, debootstrap or root is missing.

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <ostream>
#include <string>

#include "channel_client.h"
#include "child_process.h"
#include "lab_cleanup.h"
#include "qemu_guest.h"
#include "systemd_guest_test.h"
#include "vcpufold/agent/kernel_class.h"

using namespace vcpufold::protocol;
using vcpufold::testing::ChannelClient;
using vcpufold::testing::QemuGuest;
using vcpufold::testing::runShell;

namespace {

// Stale lab domains go before the tests start, and with this process on SIGTERM.
const bool kLabCleanup = vcpufold::testing::registerLabCleanup();

// A Debian release and the kernel class its stock cloud kernel has
// (docs/guest-agent.md): neither class is folded on auto hints by default.
struct GuestRelease {
  std::string name;
  std::string kernelClass;
};
// Named in test listings by the release alone.
void PrintTo(const GuestRelease& release, std::ostream* out) { *out << release.name; }

class AgentPackageInSystemdGuest : public vcpufold::testing::SystemdGuestTest,
                                   public ::testing::WithParamInterface<GuestRelease> {
 protected:
  void SetUp() override {
    bootGuest("vcpufold-pkg-e2e-" + GetParam().name, false,
              [](const auto& packages) { return std::vector{packages.nextAgent}; }, GetParam().name);
  }
  void TearDown() override { shutDown("vcpufold-agent"); }
};

}  // namespace

TEST_P(AgentPackageInSystemdGuest, UdevStartsItSystemdFoldsStopUnfolds) {
  const GuestRelease& release = GetParam();
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
  // The shipped default on the release's stock kernel: its class as the
  // bench measured it (docs/guest-agent.md); an auto hint is answered, and
  // folds only where that class is folded by default.
  EXPECT_EQ(hello->agent->kernelClass, release.kernelClass);
  std::string kernel = guestOutput("uname -r");
  std::printf("%s: agent %s, kernel %s", release.name.c_str(), hello->software.c_str(), kernel.c_str());
  if (!kernel.empty() && kernel.back() == '\n') kernel.pop_back();
  // The compiled evidence for this kernel's class (guest-agent.md's table).
  EXPECT_EQ(hello->agent->foldsOnAutoHints,
            vcpufold::agent::evidenceFor(vcpufold::agent::classifyKernel(kernel, Actuator::Cpuset)).foldsByDefault)
      << "the shipped default for " << release.kernelClass;
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

  // Its log reaches the journal at each line's own priority (spdlog's journal
  // sink): the decline of auto hints on a class not folded by default is a
  // warning, and so is a refused frame (sent here on a class that folds, to
  // have a warning to look for); the start line is not.
  const std::string journal = "journalctl -b -q --no-pager -o cat -u vcpufold-agent.service -p ";
  const std::string declined = "guest kernel class " + release.kernelClass + " is not folded by default";
  if (hello->agent->foldsOnAutoHints) {
    ASSERT_TRUE(host.sendRaw("{\"v\":1,\"type\":\"e2e-bogus\"}\n"));
    EXPECT_TRUE(waitForOutput(journal + "warning | grep -c 'refused a frame from the host'", "1\n", seen)) << seen;
  }
  const std::string warnings = guestOutput(journal + "warning");
  EXPECT_EQ(warnings.find(declined) != std::string::npos, !hello->agent->foldsOnAutoHints) << warnings;
  EXPECT_EQ(warnings.find("online CPUs in"), std::string::npos) << warnings;
  EXPECT_NE(guestOutput(journal + "info").find("online CPUs in"), std::string::npos);
  EXPECT_EQ(guestOutput("journalctl -b -q --no-pager -o export -u vcpufold-agent.service -p warning | "
                        "grep -a -m1 '^SYSLOG_IDENTIFIER='"),
            "SYSLOG_IDENTIFIER=vcpufold-agent\n");

  // An upgrade restarts the running agent on the new binary (the package's
  // try-restart; its prerm leaves it running for the upgrade), and the new
  // agent greets the host and folds again.
  const std::string mainPid = "systemctl show -p MainPID --value vcpufold-agent.service";
  const std::string pidBefore = guestOutput(mainPid);
  EXPECT_EQ(guestOutput("dpkg -i /root/" + fileName(packages_.nextAgent) + " >/root/upgrade.log 2>&1; echo $?"), "0\n")
      << guestOutput("cat /root/upgrade.log");
  ASSERT_TRUE(waitForOutput("systemctl is-active vcpufold-agent.service", "active\n", seen)) << seen;
  const std::string pidAfter = guestOutput(mainPid);
  EXPECT_NE(pidAfter, pidBefore) << "not restarted by the upgrade";
  EXPECT_EQ(guestOutput("readlink /proc/" + pidAfter.substr(0, pidAfter.find('\n')) + "/exe"),
            "/usr/sbin/vcpufold-agent\n")
      << "the running agent is not the upgraded binary";
  hello = host.greetAgent(kStepMs);
  ASSERT_TRUE(hello) << "no hello from the upgraded agent";
  ASSERT_TRUE(hello->agent);
  EXPECT_NE(hello->software.find("+next1"), std::string::npos) << hello->software;
  ASSERT_TRUE(host.send(Hint{3, 1, 120'000, HintPolicy::Fixed, "e2e"}));
  ack = host.receiveType<Ack>(kStepMs);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->applied, (CpuSet{0}));
  EXPECT_TRUE(waitForOutput(burnerCpus, "0 0\n", seen)) << "burners not folded again after the upgrade: " << seen;

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

INSTANTIATE_TEST_SUITE_P(DebianReleases, AgentPackageInSystemdGuest,
                         ::testing::Values(GuestRelease{"bookworm", "stock-before-6.6"},
                                           GuestRelease{"trixie", "stock-6.6-and-later"}),
                         [](const auto& instance) { return instance.param.name; });
