// SPDX-License-Identifier: GPL-2.0-or-later
// vcpufold-hostd's unit under a real systemd: the .deb installed by dpkg in a
// Debian 12 guest that boots systemd (PID 1 is not systemd where CI runs, so
// the unit's Type=notify, watchdog, reload, exit statuses and sandbox are
// checked here, not offline), and an upgrade of the running daemon. Skips,
// saying why, where QEMU, debootstrap or root is missing.

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "child_process.h"
#include "lab_cleanup.h"
#include "systemd_guest_test.h"

namespace {

const bool kLabCleanup = vcpufold::testing::registerLabCleanup();

// hostd in the guest: the QMP inventory over an empty directory (no VMs in
// the guest), metrics on loopback, INTERVAL_MS its tick.
std::string configWithTick(const std::string& intervalMs) {
  return "[hostd]\ninterval_ms = " + intervalMs +
         "\n[inventory]\nbackend = \"qmp\"\nqmp_directory = \"/run/vcpufold-qmp\"\n";
}

class HostdUnderSystemd : public vcpufold::testing::SystemdGuestTest {
 protected:
  void SetUp() override {
    bootGuest("vcpufold-hostd-systemd", true,
              [](const auto& packages) { return std::vector{packages.hostd, packages.nextHostd}; });
  }
  void TearDown() override { shutDown("vcpufold-hostd"); }

  // The lab's control port runs one line: the file goes through printf %b.
  void writeConfig(const std::string& text) {
    std::string escaped;
    for (const char c : text) escaped += c == '\n' ? std::string("\\n") : c == '\'' ? std::string("'\\''") : std::string(1, c);
    ASSERT_EQ(guestOutput("printf '%b' '" + escaped + "' >/etc/vcpufold/hostd.toml; echo $?"), "0\n");
  }

  std::string property(const std::string& name) {
    std::string value = guestOutput("systemctl show -p " + name + " --value vcpufold-hostd.service");
    if (!value.empty() && value.back() == '\n') value.pop_back();
    return value;
  }

  const std::string journal_ = "journalctl -b -q --no-pager -o cat -u vcpufold-hostd.service";
};

TEST_F(HostdUnderSystemd, NotifyWatchdogReloadExitStatusAndSandbox) {
  std::string seen;
  ASSERT_EQ(guestOutput("mkdir -p /run/vcpufold-qmp && dpkg -i /root/" + fileName(packages_.hostd) + " >/root/dpkg.log 2>&1; echo $?"),
            "0\n")
      << guestOutput("cat /root/dpkg.log");
  // Enabled and started by the package (dh_installsystemd), ready once ticking.
  EXPECT_EQ(guestOutput("systemctl is-enabled vcpufold-hostd.service"), "enabled\n");
  EXPECT_TRUE(waitForOutput("systemctl is-active vcpufold-hostd.service", "active\n", seen, kStepMs)) << seen;
  writeConfig(configWithTick("1000"));
  EXPECT_EQ(guestOutput("systemctl restart vcpufold-hostd.service; echo $?"), "0\n");
  EXPECT_EQ(property("StatusText"), "ticking") << "READY=1 and STATUS= reach systemd (Type=notify)";
  EXPECT_EQ(property("WatchdogUSec"), "30s");

  // The watchdog is fed: its timestamp moves (a ping every 15 s).
  const std::string firstPing = property("WatchdogTimestampMonotonic");
  EXPECT_TRUE(vcpufold::testing::waitUntil([&] { return property("WatchdogTimestampMonotonic") != firstPing; }, 25'000,
                                           1000))
      << "no watchdog ping in 25 s after " << firstPing;

  // The sandbox leaves hostd what it reads: its control socket answers with
  // the pool it read from /proc and /sys, and it logged no error.
  const std::string status = guestOutput("vcpufold-hostd status 2>&1");
  EXPECT_NE(status.find("pool"), std::string::npos) << status;
  // (This run's lines only: the first start, on the package's default libvirt
  // inventory, found no libvirtd in the guest.)
  EXPECT_EQ(guestOutput("journalctl -b -q --no-pager -o cat -p err _SYSTEMD_INVOCATION_ID=$(systemctl show -p "
                        "InvocationID --value vcpufold-hostd.service)"),
            "")
      << "errors under the sandbox";
  const std::string exposure =
      guestOutput("systemd-analyze security vcpufold-hostd.service 2>/dev/null | sed -n 's/.*Overall exposure level for "
                  ".*: \\([0-9.]*\\).*/\\1/p'");
  EXPECT_FALSE(exposure.empty());
  EXPECT_LE(std::stod(exposure.empty() ? "99" : exposure), 2.0) << exposure;

  // systemctl reload: a good file is applied and named by key; a bad one fails
  // the reload (ExecReload= checks it first) and the running one stays.
  writeConfig(configWithTick("2000"));
  EXPECT_EQ(guestOutput("systemctl reload vcpufold-hostd.service; echo $?"), "0\n");
  EXPECT_TRUE(waitForOutput(journal_ + " | grep -c 'configuration reloaded: applied hostd.interval_ms'", "1\n", seen, 10'000))
      << guestOutput(journal_ + " | tail -5");
  const std::string pid = property("MainPID");
  writeConfig(configWithTick("5"));
  EXPECT_NE(guestOutput("systemctl reload vcpufold-hostd.service >/dev/null 2>&1; echo $?"), "0\n")
      << "a reload with a bad file must fail";
  EXPECT_EQ(guestOutput("systemctl is-active vcpufold-hostd.service"), "active\n");
  EXPECT_EQ(property("MainPID"), pid) << "the running daemon stays";
  EXPECT_NE(guestOutput(journal_ + " | grep -c 'hostd.interval_ms: 5 is out of range'"), "0\n")
      << "the reason is in the journal";
  EXPECT_EQ(guestOutput(journal_ + " | grep -c 'configuration refused'"), "0\n")
      << "the daemon never saw the bad file: the check failed the reload first";

  // A configuration that does not validate at start: exit 78, not restarted.
  EXPECT_NE(guestOutput("systemctl restart vcpufold-hostd.service >/dev/null 2>&1; echo $?"), "0\n");
  std::this_thread::sleep_for(std::chrono::seconds(5));  // two RestartSec= periods
  EXPECT_EQ(property("ExecMainStatus"), "78");
  EXPECT_EQ(property("NRestarts"), "0") << "RestartPreventExitStatus=64 78";
  EXPECT_EQ(guestOutput("systemctl is-active vcpufold-hostd.service"), "failed\n");

  // Remote scraping as hostd.md says: metrics on every address and the
  // shipped drop-in naming the monitoring network. A scraper in another
  // network namespace gets the page from that network's address, and nothing
  // from another address of the same host (the unit drops it).
  ASSERT_EQ(guestOutput("modprobe veth && ip netns add mon && ip link add veth-host type veth peer name veth-mon netns mon "
                        "&& ip addr add 10.99.0.1/24 dev veth-host && ip addr add 10.98.0.1/24 dev veth-host && "
                        "ip link set veth-host up && ip -n mon addr add 10.99.0.2/24 dev veth-mon && "
                        "ip -n mon addr add 10.98.0.2/24 dev veth-mon && ip -n mon link set veth-mon up; echo $?"),
            "0\n");
  ASSERT_EQ(guestOutput("mkdir -p /etc/systemd/system/vcpufold-hostd.service.d && sed "
                        "'s|^IPAddressAllow=.*|IPAddressAllow=10.99.0.0/24|' "
                        "/usr/share/doc/vcpufold-hostd/examples/metrics-remote.conf "
                        ">/etc/systemd/system/vcpufold-hostd.service.d/metrics-remote.conf && systemctl daemon-reload; "
                        "echo $?"),
            "0\n");
  writeConfig(configWithTick("1000") + "[metrics]\naddress = \"[::]:9477\"\n");
  EXPECT_EQ(guestOutput("systemctl restart vcpufold-hostd.service; echo $?"), "0\n");
  const auto scrape = [&](const std::string& address) {
    return guestOutput("ip netns exec mon timeout 5 bash -c 'exec 3<>/dev/tcp/" + address +
                       "/9477 && printf \"GET /metrics HTTP/1.0\\r\\n\\r\\n\" >&3 && head -1 <&3' 2>&1 | tr -d '\\r'");
  };
  EXPECT_NE(scrape("10.99.0.1").find(" 200 "), std::string::npos) << scrape("10.99.0.1");
  EXPECT_EQ(scrape("10.98.0.1").find(" 200 "), std::string::npos) << "a network the drop-in does not name got through";
  EXPECT_EQ(guestOutput("rm /etc/systemd/system/vcpufold-hostd.service.d/metrics-remote.conf && systemctl "
                        "daemon-reload && systemctl restart vcpufold-hostd.service; echo $?"),
            "0\n");
  EXPECT_EQ(scrape("10.99.0.1").find(" 200 "), std::string::npos) << "without the drop-in only loopback reaches it";

  // A good file again: it starts.
  writeConfig(configWithTick("1000"));
  EXPECT_EQ(guestOutput("systemctl restart vcpufold-hostd.service; echo $?"), "0\n");

  // An upgrade to the next version restarts the running daemon on the new
  // binary (dh_installsystemd's restart after upgrade) and keeps the edited
  // configuration file (a conffile).
  const std::string pidBefore = property("MainPID");
  EXPECT_EQ(guestOutput("dpkg -i /root/" + fileName(packages_.nextHostd) + " >/root/upgrade.log 2>&1; echo $?"), "0\n")
      << guestOutput("cat /root/upgrade.log");
  EXPECT_TRUE(waitForOutput("systemctl is-active vcpufold-hostd.service", "active\n", seen)) << seen;
  const std::string pidAfter = property("MainPID");
  EXPECT_NE(pidAfter, pidBefore) << "not restarted by the upgrade";
  EXPECT_EQ(guestOutput("readlink /proc/" + pidAfter + "/exe"), "/usr/sbin/vcpufold-hostd\n")
      << "the running daemon is not the upgraded binary";
  EXPECT_TRUE(waitForOutput("timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/9477 && printf \"GET /metrics HTTP/1.0\\r\\n\\r\\n\" >&3 "
                            "&& cat <&3' | grep -c '^vcpufold_build_info{version=\"[^\"]*+next1\"} 1'",
                            "1\n", seen, 20'000))
      << "the running daemon does not report the new version";
  EXPECT_EQ(guestOutput("grep -c '^interval_ms = 1000$' /etc/vcpufold/hostd.toml"), "1\n") << "the edit was lost";
  EXPECT_EQ(guestOutput("systemctl is-enabled vcpufold-hostd.service"), "enabled\n");

  // A stop is clean.
  EXPECT_EQ(guestOutput("systemctl stop vcpufold-hostd.service; echo $?"), "0\n");
  EXPECT_EQ(property("ExecMainStatus"), "0");
  EXPECT_EQ(guestOutput("systemctl is-active vcpufold-hostd.service"), "inactive\n");

  // An administrator's disable and stop survive the next upgrade (here a
  // reinstall of the same version): Debian's deb-systemd-invoke starts no
  // disabled unit that is not running. (A running one it restarts, disabled
  // or not, so that it runs the new binary.)
  ASSERT_EQ(guestOutput("systemctl disable vcpufold-hostd.service 2>/dev/null; echo $?"), "0\n");
  EXPECT_EQ(guestOutput("dpkg -i /root/" + fileName(packages_.nextHostd) + " >/root/upgrade.log 2>&1; echo $?"), "0\n")
      << guestOutput("cat /root/upgrade.log");
  EXPECT_EQ(guestOutput("systemctl is-enabled vcpufold-hostd.service"), "disabled\n");
  EXPECT_EQ(guestOutput("systemctl is-active vcpufold-hostd.service"), "inactive\n") << "started by the package";
}

}  // namespace
