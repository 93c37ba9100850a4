// SPDX-License-Identifier: GPL-2.0-or-later
// The README's quick start, followed as written on the lab: the hostd .deb
// installed on this host, the channel attached live to a running libvirt
// guest (Debian 12 with systemd, TCG) with the shipped channel.xml, the
// agent .deb installed in the guest with dpkg, a policy set with
// `vcpufold-hostd policy`, and `vcpufold-hostd status` showing the guest
// folded. Where PID 1 is not systemd the package's postinst cannot start
// the service, and the test starts the unit's ExecStart= itself. The package
// is purged afterwards. Skips, saying why, where QEMU, libvirt, debootstrap
// or root is missing.

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "child_process.h"
#include "guest_control.h"
#include "lab_cleanup.h"
#include "qemu_guest.h"
#include "status_table.h"

using vcpufold::testing::ChildProcess;
using vcpufold::testing::GuestControl;
using vcpufold::testing::runShell;
using vcpufold::testing::statusRow;
using vcpufold::testing::waitUntil;

namespace {

const bool kLabCleanup = vcpufold::testing::registerLabCleanup();

constexpr int kBootMs = 300'000;  // systemd under TCG, from a 60 MB initramfs
constexpr int kStepMs = 60'000;
constexpr const char* kVm = "vcpufold-e2e-quickstart";
const std::string kVirsh = "virsh -c qemu:///system ";

// A running libvirt guest with a virtio-serial controller (the lab's control
// port is on it, as the QEMU guest agent's channel would be) and no vcpufold channel.
std::string domainXml(const std::string& kernel, const std::string& initramfs, const std::string& dir) {
  return "<domain type='qemu'><name>" + std::string(kVm) +
         "</name><memory unit='MiB'>1536</memory><vcpu>2</vcpu>"
         "<os><type arch='x86_64' machine='pc'>hvm</type><kernel>" +
         kernel + "</kernel><initrd>" + initramfs +
         "</initrd><cmdline>console=ttyS0 panic=-1 quiet systemd.show_status=0</cmdline></os>"
         "<features><acpi/><apic/></features><cpu mode='maximum'/><on_poweroff>destroy</on_poweroff>"
         "<devices><emulator>/usr/bin/qemu-system-x86_64</emulator>"
         "<serial type='file'><source path='" +
         dir +
         "/console.log'/><target port='0'/></serial><controller type='virtio-serial' index='0'/>"
         "<channel type='unix'><source mode='bind' path='" +
         dir +
         "/ctl.sock'/><target type='virtio' name='org.vcpufold.lab.ctl'/></channel>"
         "<memballoon model='none'/></devices></domain>";
}

class QuickStart : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto reason = vcpufold::testing::systemdGuestUnavailableReason())
      GTEST_SKIP() << "end-to-end tests skipped: " << *reason;
    if (runShell("command -v virsh").empty()) GTEST_SKIP() << "virsh is not installed";
    if (runShell("dpkg-query -W -f='${Status}' vcpufold-hostd 2>/dev/null") == "install ok installed")
      GTEST_SKIP() << "vcpufold-hostd is installed on this host; the test does not replace it";
    dir_ = std::filesystem::temp_directory_path() / ("vcpufold-quickstart-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::string log;
    const auto packages = vcpufold::testing::builtPackages(VCPUFOLD_DEB_DIR, log);
    ASSERT_TRUE(packages) << log;
    hostdDeb_ = packages->hostd;
    const auto image = vcpufold::testing::buildSystemdGuestImage(packages->agent, true, log);
    ASSERT_TRUE(image) << log;
    runShell(VCPUFOLD_SOURCE_DIR "/tests/lab/libvirt/libvirtd.sh");
    std::ofstream(dir_ / "domain.xml") << domainXml(image->kernel, image->initrd, dir_.string());
    runShell(kVirsh + "destroy " + kVm + " >/dev/null 2>&1; " + kVirsh + "undefine " + kVm + " >/dev/null 2>&1");
    const std::string started =
        runShell(kVirsh + "define " + (dir_ / "domain.xml").string() + " 2>&1 && " + kVirsh + "start " + kVm + " 2>&1");
    defined_ = true;
    control_ = std::make_unique<GuestControl>((dir_ / "ctl.sock").string());
    ASSERT_TRUE(control_->waitReady(kBootMs)) << started << runShell("tail -30 " + (dir_ / "console.log").string());
  }

  void TearDown() override {
    if (HasFailure() && control_)
      std::printf("agent journal:\n%s\n", guest("journalctl -b --no-pager -u vcpufold-agent | tail -30").c_str());
    hostd_.reset();
    if (installed_) std::printf("%s", runShell("dpkg --purge vcpufold-hostd 2>&1 | tail -2").c_str());
    if (defined_)
      runShell(kVirsh + "destroy " + kVm + " >/dev/null 2>&1; " + kVirsh + "undefine " + kVm + " >/dev/null 2>&1");
    control_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  std::string guest(const std::string& command) {
    auto result = control_->run(command, kStepMs);
    return result ? result->output : "<no answer>";
  }

  std::filesystem::path dir_;
  std::string hostdDeb_;
  bool installed_ = false;
  bool defined_ = false;
  std::unique_ptr<GuestControl> control_;
  std::unique_ptr<ChildProcess> hostd_;
};

}  // namespace

TEST_F(QuickStart, TheReadmeStepsFoldAGuest) {
  // apt install ./vcpufold-hostd_*.deb   (starts vcpufold-hostd.service under systemd)
  const std::string dpkg =
      runShell("DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends " + hostdDeb_ + " 2>&1");
  installed_ = true;
  ASSERT_EQ(runShell("dpkg-query -W -f='${Status}' vcpufold-hostd"), "install ok installed") << dpkg;
  if (!std::filesystem::exists("/run/systemd/system")) {
    // No systemd here: what the unit would run.
    const std::string execStart =
        runShell("sed -n 's/^ExecStart=//p' /lib/systemd/system/vcpufold-hostd.service | tr -d '\\n'");
    ASSERT_EQ(execStart, "/usr/sbin/vcpufold-hostd");
    std::filesystem::create_directories("/run/vcpufold");
    hostd_ = std::make_unique<ChildProcess>(execStart, std::vector<std::string>{}, (dir_ / "hostd.log").string());
  } else {
    EXPECT_EQ(runShell("systemctl is-active vcpufold-hostd"), "active\n");
  }

  // virsh attach-device VM /usr/share/vcpufold-hostd/channel.xml --live --config
  const std::string attach =
      runShell(kVirsh + "attach-device " + kVm + " /usr/share/vcpufold-hostd/channel.xml --live --config 2>&1");
  ASSERT_NE(attach.find("Device attached successfully"), std::string::npos) << attach;

  // In the guest: apt install ./vcpufold-agent_*.deb   (udev starts it: the port is there)
  const std::string agentDpkg =
      guest("DEBIAN_FRONTEND=noninteractive apt-get install -y /root/vcpufold-agent_*_amd64.deb 2>&1 | tail -3");
  EXPECT_TRUE(waitUntil([&] { return guest("systemctl is-active vcpufold-agent") == "active\n"; }, kStepMs, 500))
      << agentDpkg << guest("systemctl status vcpufold-agent --no-pager 2>&1 | tail -20");

  // vcpufold-hostd policy VM set mode=fixed vcpus=1
  const std::string policy = runShell(std::string("vcpufold-hostd policy ") + kVm + " set mode=fixed vcpus=1 2>&1");
  const std::string shown = runShell(std::string("vcpufold-hostd policy ") + kVm + " show 2>&1");
  EXPECT_NE(shown.find("in force: mode=fixed vcpus=1"), std::string::npos) << policy << shown;

  // vcpufold-hostd status: the guest folded to one vCPU, acknowledged, under the host's control.
  std::map<std::string, std::string> row;
  std::string status;
  EXPECT_TRUE(waitUntil(
      [&] {
        status = runShell("vcpufold-hostd status 2>&1");
        row = statusRow(status, kVm);
        return row["AGENT"] == "ready" && row["APPLIED"] == "0" && row["CONTROL"] == "host";
      },
      kStepMs, 500))
      << policy << status << runShell("tail -20 " + (dir_ / "hostd.log").string());
  EXPECT_EQ(row["POLICY"], "fixed");
  std::printf("%s", status.c_str());
}
