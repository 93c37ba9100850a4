// SPDX-License-Identifier: GPL-2.0-or-later
#include "lab_cleanup.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>

namespace vcpufold::testing {
namespace {

int signalPipe[2] = {-1, -1};

// Async-signal-safe: the signal number goes down a pipe to the cleanup thread.
// (Blocking the signals instead would pass the blocked mask on to every
// process the tests start through a shell, libvirtd included.)
void onStopSignal(int signo) {
  const char byte = static_cast<char>(signo);
  // Nothing to do if it fails; the result is taken because glibc's fortified
  // write() must not be ignored.
  if (::write(signalPipe[1], &byte, 1) != 1) return;
}

class LabCleanup : public ::testing::Environment {
 public:
  void SetUp() override {
    destroyStaleLabDomains();
    if (::pipe2(signalPipe, O_CLOEXEC) != 0) return;
    std::thread([] {
      char signo = 0;
      if (::read(signalPipe[0], &signo, 1) != 1) return;
      // Shells the test started (guests.sh, virsh) are not its direct
      // children that PR_SET_PDEATHSIG covers: stop every descendant first,
      // or a guests.sh half way through would start a guest after the cleanup.
      const std::string self = std::to_string(::getpid());
      [[maybe_unused]] const int killed =
          std::system(("kill_tree() { for c in $(pgrep -P \"$1\"); do kill_tree \"$c\"; done; "
                       "kill -9 \"$1\" 2>/dev/null; }; "
                       "for c in $(pgrep -P " +
                       self + "); do [ \"$c\" = $$ ] || kill_tree \"$c\"; done; true")
                          .c_str());
      destroyStaleLabDomains();
      ::_exit(128 + signo);  // children started by the test die with it (PR_SET_PDEATHSIG)
    }).detach();
    struct sigaction action {};
    action.sa_handler = onStopSignal;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGTERM, &action, nullptr);
    ::sigaction(SIGINT, &action, nullptr);
  }
};

}  // namespace

bool registerLabCleanup() {
  ::testing::AddGlobalTestEnvironment(new LabCleanup);
  return true;
}

}  // namespace vcpufold::testing
