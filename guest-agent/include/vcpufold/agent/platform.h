#pragma once
// What kind of machine the agent runs on: the steal-time fallback only makes
// sense in a VM, and upstream refuses it in Xen dom0 (whose steal is not ours to fold).

#include <string_view>

#include "vcpufold/common/rooted_fs.h"

namespace vcpufold::agent {

struct Platform {
  bool isVirtualMachine = false;
  bool isXenDom0 = false;
};

// cpuinfo: /proc/cpuinfo; xenCapabilities: /proc/xen/capabilities or "".
Platform classifyPlatform(std::string_view cpuinfo, std::string_view xenCapabilities);
Platform detectPlatform(const RootedFs& fs);

}  // namespace vcpufold::agent
