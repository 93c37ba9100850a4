#include "lab_cleanup.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

namespace vcpufold::testing {
namespace {

class LabCleanup : public ::testing::Environment {
 public:
  void SetUp() override {
    destroyStaleLabDomains();
    // The signals go to a thread of their own: blocked here, before the tests
    // start their threads (which inherit the mask).
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    ::pthread_sigmask(SIG_BLOCK, &stop, nullptr);
    std::thread([stop] {
      int signo = 0;
      if (::sigwait(&stop, &signo) != 0) return;
      destroyStaleLabDomains();
      ::_exit(128 + signo);  // children started by the test die with it (PR_SET_PDEATHSIG)
    }).detach();
  }
};

}  // namespace

void destroyStaleLabDomains() {
  (void)std::system(
      "command -v virsh >/dev/null 2>&1 && pgrep -x libvirtd >/dev/null 2>&1 && "
      "for d in $(virsh -c qemu:///system list --all --name 2>/dev/null | grep -E '^vcpufold-(e2e|fold)-'); do "
      "virsh -c qemu:///system destroy \"$d\" >/dev/null 2>&1; virsh -c qemu:///system undefine \"$d\" >/dev/null 2>&1; "
      "echo \"destroyed the stale lab domain $d\"; done; true");
}

bool registerLabCleanup() {
  ::testing::AddGlobalTestEnvironment(new LabCleanup);
  return true;
}

}  // namespace vcpufold::testing
