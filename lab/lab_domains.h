// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The lab's libvirt domains (vcpufold-e2e-*, vcpufold-fold-*, the benches'
// vcpufold-bench-*) outlive a killed test or bench: libvirtd, not the
// process that started them, is their parent.

namespace vcpufold::testing {

// Destroys and undefines every libvirt domain named vcpufold-e2e-*,
// vcpufold-fold-* or vcpufold-bench-*; quiet where libvirt is not running.
void destroyStaleLabDomains();

}  // namespace vcpufold::testing
