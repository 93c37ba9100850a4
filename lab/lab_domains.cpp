// SPDX-License-Identifier: GPL-2.0-or-later
#include "lab_domains.h"

#include <cstdlib>

namespace vcpufold::testing {

void destroyStaleLabDomains() {
  // Best effort: what it could not destroy, the next run tries again.
  [[maybe_unused]] const int destroyed = std::system(
      "command -v virsh >/dev/null 2>&1 && pgrep -x libvirtd >/dev/null 2>&1 && "
      "for d in $(virsh -c qemu:///system list --all --name 2>/dev/null | grep -E '^vcpufold-(e2e|fold|bench)-'); do "
      "virsh -c qemu:///system destroy \"$d\" >/dev/null 2>&1; virsh -c qemu:///system undefine \"$d\" >/dev/null "
      "2>&1; "
      "echo \"destroyed the stale lab domain $d\"; done; true");
}

}  // namespace vcpufold::testing
