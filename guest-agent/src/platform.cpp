// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/platform.h"

#include "vcpufold/common/system_paths.h"

namespace vcpufold::agent {
namespace {

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  return text;
}

// System vendors that only virtual machines report (bare-metal vendors such as
// "Amazon EC2" or "Microsoft Corporation" also make physical machines).
bool isHypervisorVendor(std::string_view vendor) {
  for (std::string_view known : {"QEMU", "Xen", "innotek GmbH", "VMware, Inc.", "Parallels Software International Inc."})
    if (vendor == known) return true;
  return false;
}

}  // namespace

Platform classifyPlatform(const PlatformEvidence& evidence) {
  Platform platform;
  // x86 guests carry the "hypervisor" CPUID bit in their flags line.
  const std::string_view cpuinfo = evidence.cpuinfo;
  for (std::size_t pos = 0; (pos = cpuinfo.find("flags", pos)) != std::string_view::npos; ++pos) {
    const auto end = cpuinfo.find('\n', pos);
    const std::string_view line = cpuinfo.substr(pos, end == std::string_view::npos ? end : end - pos);
    if (line.find(" hypervisor") != std::string_view::npos) {
      platform.isVirtualMachine = true;
      break;
    }
  }
  // Other architectures have no such flag: the kernel's own word, or the firmware's.
  if (!trimmed(evidence.hypervisorType).empty()) platform.isVirtualMachine = true;
  if (isHypervisorVendor(trimmed(evidence.dmiSysVendor))) platform.isVirtualMachine = true;
  // Xen's control domain says "control_d" in its capabilities.
  platform.isXenDom0 = evidence.xenCapabilities.find("control_d") != std::string_view::npos;
  return platform;
}

Platform detectPlatform(const RootedFs& fs) {
  const auto cpuinfo = fs.readFile(paths::kProcCpuinfo);
  const auto xen = fs.readFile(paths::kXenCapabilities);
  const auto hypervisor = fs.readFile(paths::kHypervisorType);
  const auto vendor = fs.readFile(paths::kDmiSysVendor);
  return classifyPlatform(PlatformEvidence{cpuinfo ? *cpuinfo : "", xen ? *xen : "", hypervisor ? *hypervisor : "",
                                           vendor ? *vendor : ""});
}

std::optional<std::string> foldingRefusal(const Platform& platform) {
  if (platform.isXenDom0) return "this is Xen dom0, which hosts the guests: it is never folded";
  if (!platform.isVirtualMachine)
    return "this is not a virtual machine (no hypervisor CPU flag, /sys/hypervisor/type or hypervisor DMI vendor): "
           "it is never folded";
  return std::nullopt;
}

}  // namespace vcpufold::agent
