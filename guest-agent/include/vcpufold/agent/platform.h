// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// What kind of machine the agent runs on. Folding (by hints or by the
// steal-time fallback) only makes sense in a VM; Xen dom0 is refused too (its
// steal is not ours to fold, and it hosts the guests). A VM is recognised by
// any sign the kernel gives: the x86 "hypervisor" CPU flag, a
// /sys/hypervisor/type, or a DMI system vendor of a known hypervisor.

#include <optional>
#include <string>
#include <string_view>

#include "vcpufold/common/rooted_fs.h"

namespace vcpufold::agent {

struct Platform {
  bool isVirtualMachine = false;
  bool isXenDom0 = false;
};

struct PlatformEvidence {
  std::string_view cpuinfo;          // /proc/cpuinfo
  std::string_view xenCapabilities;  // /proc/xen/capabilities, or ""
  std::string_view hypervisorType;   // /sys/hypervisor/type, or ""
  std::string_view dmiSysVendor;     // /sys/class/dmi/id/sys_vendor, or ""
};

Platform classifyPlatform(const PlatformEvidence& evidence);
Platform detectPlatform(const RootedFs& fs);

// Why this machine must not be folded (bare metal, Xen dom0); none in a VM.
std::optional<std::string> foldingRefusal(const Platform& platform);

}  // namespace vcpufold::agent
