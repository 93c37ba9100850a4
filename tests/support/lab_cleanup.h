// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Lab guests under libvirt outlive a test process that is killed (a ctest
// timeout, Ctrl-C): libvirtd, not the test, is their parent. An end-to-end
// test binary calls registerLabCleanup() once (a static in its file): stale
// lab domains (vcpufold-e2e-*, vcpufold-fold-*, the benches' vcpufold-bench-*) are destroyed before its tests start,
// and on SIGTERM or SIGINT before it exits.

#include "lab_domains.h"

namespace vcpufold::testing {

bool registerLabCleanup();

}  // namespace vcpufold::testing
