// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A gtest fixture around the lab's Debian guests (12, or 13) that boot systemd
// and udev (tests/lab/build-systemd-guest.sh), with the packages of
// VCPUFOLD_DEB_DIR: the package tests' common set-up, guest commands and
// polling. Skips, saying why, where QEMU, debootstrap or root is missing.

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "child_process.h"
#include "qemu_guest.h"

namespace vcpufold::testing {

class SystemdGuestTest : public ::testing::Test {
 protected:
  static constexpr int kBootMs = 300'000;  // systemd under TCG, from a 60 MB initramfs
  static constexpr int kStepMs = 60'000;

  // Boots the guest of Debian `release` (bookworm or trixie): the agent
  // package installed (or, `agentUninstalled`, left in /root/), and the
  // packages `extraFiles` picks from builtPackages() copied into /root/. A
  // fatal failure ends the test.
  void bootGuest(const std::string& name, bool agentUninstalled,
                 const std::function<std::vector<std::string>(const BuiltPackages&)>& extraFiles,
                 const std::string& release = "bookworm") {
    if (auto reason = systemdGuestUnavailableReason()) GTEST_SKIP() << "end-to-end tests skipped: " << *reason;
    runDirectory_ = std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
    std::filesystem::create_directories(runDirectory_);
    std::string log;
    const auto built = builtPackages(VCPUFOLD_DEB_DIR, log);
    ASSERT_TRUE(built) << log;
    packages_ = *built;
    const auto started = std::chrono::steady_clock::now();
    const auto image = buildSystemdGuestImage(packages_.agent, agentUninstalled, log, extraFiles(packages_), release);
    ASSERT_TRUE(image) << log;
    std::printf("%s guest image built in %.0f s\n", release.c_str(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    guest_ = std::make_unique<QemuGuest>(QemuGuestSpec{*image, runDirectory_, "2", "1536M", "systemd.show_status=0"});
    std::printf("guest under %s in %s\n", QemuGuest::accelerator().c_str(), runDirectory_.c_str());
    ASSERT_TRUE(guest_->waitReady(kBootMs)) << "guest did not come up:\n" << guest_->console();
  }

  // On a failure, the unit's journal; then the guest goes.
  void shutDown(const std::string& unit) {
    if (HasFailure() && guest_)
      std::printf("%s journal:\n%s\n", unit.c_str(),
                  guestOutput("journalctl -b --no-pager -u " + unit + " | tail -40").c_str());
    guest_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(runDirectory_, ignored);
  }

  std::string guestOutput(const std::string& command) {
    auto result = guest_->run(command, kStepMs);
    return result ? result->output : "(no answer)";
  }

  // Polls a guest command until its output equals `expected`.
  bool waitForOutput(const std::string& command, const std::string& expected, std::string& seen,
                     int timeoutMs = kStepMs) {
    return waitUntil(
        [&] {
          seen = guestOutput(command);
          return seen == expected;
        },
        timeoutMs, 500);
  }

  static std::string fileName(const std::string& path) { return std::filesystem::path(path).filename().string(); }

  std::filesystem::path runDirectory_;
  BuiltPackages packages_;
  std::unique_ptr<QemuGuest> guest_;
};

}  // namespace vcpufold::testing
