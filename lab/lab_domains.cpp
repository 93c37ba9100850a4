// SPDX-License-Identifier: GPL-2.0-or-later
#include "lab_domains.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>

namespace vcpufold::testing {
namespace {

int stopSignalPipe[2] = {-1, -1};

// Async-signal-safe: the signal number goes down a pipe to the cleanup thread.
// (Blocking the signals instead would pass the blocked mask on to every
// process started through a shell, libvirtd included.)
void onStopSignal(int signo) {
  const char byte = static_cast<char>(signo);
  // Nothing to do if it fails; the result is taken because glibc's fortified
  // write() must not be ignored.
  if (::write(stopSignalPipe[1], &byte, 1) != 1) return;
}

}  // namespace

void destroyStaleLabDomains() {
  // Best effort: what it could not destroy, the next run tries again.
  [[maybe_unused]] const int destroyed = std::system(
      "command -v virsh >/dev/null 2>&1 && pgrep -x libvirtd >/dev/null 2>&1 && "
      "for d in $(virsh -c qemu:///system list --all --name 2>/dev/null | grep -E '^vcpufold-(e2e|fold|bench)-'); do "
      "virsh -c qemu:///system destroy \"$d\" >/dev/null 2>&1; virsh -c qemu:///system undefine \"$d\" >/dev/null "
      "2>&1; "
      "echo \"destroyed the stale lab domain $d\"; done; true");
}

void destroyLabDomainsOnStopSignal() {
  if (stopSignalPipe[0] >= 0 || ::pipe2(stopSignalPipe, O_CLOEXEC) != 0) return;
  std::thread([] {
    char signo = 0;
    if (::read(stopSignalPipe[0], &signo, 1) != 1) return;
    // Shells started here (guests.sh, virsh) are not direct children that
    // PR_SET_PDEATHSIG covers: every descendant stops first, or a guests.sh
    // half way through would start a guest after the cleanup.
    const std::string self = std::to_string(::getpid());
    [[maybe_unused]] const int killed =
        std::system(("kill_tree() { for c in $(pgrep -P \"$1\"); do kill_tree \"$c\"; done; "
                     "kill -9 \"$1\" 2>/dev/null; }; "
                     "for c in $(pgrep -P " +
                     self + "); do [ \"$c\" = $$ ] || kill_tree \"$c\"; done; true")
                        .c_str());
    destroyStaleLabDomains();
    ::_exit(128 + signo);  // direct children die with it (PR_SET_PDEATHSIG)
  }).detach();
  struct sigaction action {};
  action.sa_handler = onStopSignal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);
}

}  // namespace vcpufold::testing
