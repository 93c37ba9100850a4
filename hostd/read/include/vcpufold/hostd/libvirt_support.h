// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// What every user of libvirt's C API in hostd needs: errors as Error, libvirt
// kept off stderr, domain handles that free themselves.

#include <libvirt/libvirt.h>

#include <memory>
#include <string>

#include "vcpufold/common/expected.h"

namespace vcpufold::hostd {

// The last libvirt error, with what was being done.
Error libvirtError(const std::string& what);

// libvirt prints every error on stderr unless a handler takes it; hostd reads
// them from virGetLastError where they happen instead. Call before connecting.
void silenceLibvirtErrors();

struct DomainDeleter {
  void operator()(virDomainPtr domain) const { virDomainFree(domain); }
};
using DomainHandle = std::unique_ptr<virDomain, DomainDeleter>;

}  // namespace vcpufold::hostd
