// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// QemuGuest: a real guest for end-to-end tests. Direct kernel boot of the lab
// image (tests/lab/build-guest.sh), the vcpufold port org.vcpufold.hint.0 and
// the lab control port org.vcpufold.lab.ctl on host UNIX sockets, the console
// in a log file. TCG unless hardware virtualization is real (KVM).

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "child_process.h"
#include "guest_control.h"

namespace vcpufold::testing {

struct LabImage {
  std::string kernel;
  std::string initrd;
};

// Why end-to-end tests cannot run here (no QEMU, no busybox), or nullopt.
std::optional<std::string> labUnavailableReason();

// Where lab images, guests' sockets and downloads go: $VCPUFOLD_LAB_DIR, else /var/tmp/vcpufold-lab.
std::string labDirectory();
// The patched guest kernel tests/kernel/build-kernel.sh builds (it may not exist yet).
std::string patchedKernelImage();
// hackbench from Debian's rt-tests, downloaded and unpacked into the lab
// directory (never installed on the host); its path, which exists on success.
std::string fetchHackbench();

// Builds (or refreshes) a lab image named `name` with extra files
// ("HOST:GUEST" or "HOST" for /lab/<name>) and binaries with their libraries.
std::optional<LabImage> buildLabImage(const std::string& name, const std::vector<std::string>& files,
                                      const std::vector<std::string>& binaries, std::string& log);

// The .debs scripts/build-debs.sh left in `debDirectory` (dpkg-buildpackage;
// ctest's packaging.build_debs runs it before any test that needs them);
// nullopt, saying why in `log`, when either is missing.
struct BuiltPackages {
  std::string agent;
  std::string hostd;
  std::string nextAgent;  // the same sources as the next version (debDirectory/next), for upgrades
  std::string nextHostd;
};
std::optional<BuiltPackages> builtPackages(const std::filesystem::path& debDirectory, std::string& log);
// Why the systemd guest cannot be built here (no QEMU, not root, no
// debootstrap), or nullopt.
std::optional<std::string> systemdGuestUnavailableReason();
// tests/lab/build-systemd-guest.sh: a Debian guest of `release` (bookworm,
// Debian 12 on its 6.1 cloud kernel; trixie, Debian 13 on its 6.12 cloud
// kernel) booting systemd and udev, the agent .deb installed by dpkg or,
// `uninstalled`, left in /root/; `extraFiles` are copied into its /root/ as well.
std::optional<LabImage> buildSystemdGuestImage(const std::string& agentDeb, bool uninstalled, std::string& log,
                                               const std::vector<std::string>& extraFiles = {},
                                               const std::string& release = "bookworm");

struct QemuGuestSpec {
  LabImage image;
  std::filesystem::path runDirectory;  // sockets and logs go here
  std::string smp = "4";
  std::string memory = "256M";
  std::string kernelArgs;  // appended to the command line, e.g. "lab.run=agent-e2e"
  // Set: the guest is started as docs/hostd.md tells plain QEMU and Proxmox
  // users, for hostd's QMP backend: -qmp unix:DIR/NAME.qmp and the hint port
  // on DIR/NAME.hint.sock behind the documented device ids, DIR being
  // qmpDirectory (the lab's control port stays in runDirectory).
  std::string vmName{};
  std::filesystem::path qmpDirectory{};
  // Set: the process waits for a migration instead of booting (-incoming
  // VALUE, e.g. "unix:/path"); the guest is the one migrated to it.
  std::string incoming{};
};

class QemuGuest {
 public:
  explicit QemuGuest(QemuGuestSpec spec);
  ~QemuGuest();

  // "kvm" or "tcg", as chosen for this machine.
  static std::string accelerator();

  [[nodiscard]] std::string hintSocket() const;
  [[nodiscard]] std::string qmpSocket() const;
  [[nodiscard]] std::string consoleLog() const;
  [[nodiscard]] std::string console() const;  // what the guest printed so far

  using CommandResult = GuestControl::Result;
  // Runs a shell command in the guest through the control port.
  std::optional<CommandResult> run(const std::string& command, int timeoutMs) {
    return control_.run(command, timeoutMs);
  }
  // Polls the control port until the guest answers.
  bool waitReady(int timeoutMs) { return control_.waitReady(timeoutMs); }
  // Sends one QMP command (a JSON object) and returns QEMU's answer line
  // ({"return": ...} or {"error": ...}), skipping events; nullopt on timeout.
  std::optional<std::string> qmp(const std::string& command, int timeoutMs);
  [[nodiscard]] bool running() { return process_ && process_->running(); }
  // How QEMU ended (its exit status, or 128 + the signal), if it has.
  [[nodiscard]] std::optional<int> exitStatus() { return process_ ? process_->waitExit(0) : std::nullopt; }

 private:
  QemuGuestSpec spec_;
  std::unique_ptr<ChildProcess> process_;
  GuestControl control_;
};

}  // namespace vcpufold::testing
