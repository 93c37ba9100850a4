// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The lab's libvirt domains (vcpufold-e2e-*, vcpufold-fold-*, the benches'
// vcpufold-bench-*) outlive a killed test or bench: libvirtd, not the
// process that started them, is their parent.

namespace vcpufold::testing {

// Destroys and undefines every libvirt domain named vcpufold-e2e-*,
// vcpufold-fold-* or vcpufold-bench-*; quiet where libvirt is not running.
void destroyStaleLabDomains();

// From now on, SIGTERM or SIGINT (a ctest timeout, Ctrl-C) stops every
// process this one started, destroys the lab's domains, and exits with
// 128 + the signal: a killed test or bench leaves no guest burning the
// host's CPUs. Call once, from the main thread, before starting guests.
void destroyLabDomainsOnStopSignal();

}  // namespace vcpufold::testing
