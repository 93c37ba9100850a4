#include "vcpufold/agent/platform.h"

#include "vcpufold/common/system_paths.h"

namespace vcpufold::agent {

Platform classifyPlatform(std::string_view cpuinfo, std::string_view xenCapabilities) {
  Platform platform;
  // x86 guests carry the "hypervisor" CPUID bit in their flags line.
  for (std::size_t pos = 0; (pos = cpuinfo.find("flags", pos)) != std::string_view::npos; ++pos) {
    const auto end = cpuinfo.find('\n', pos);
    const std::string_view line = cpuinfo.substr(pos, end == std::string_view::npos ? end : end - pos);
    if (line.find(" hypervisor") != std::string_view::npos) {
      platform.isVirtualMachine = true;
      break;
    }
  }
  // Xen's control domain says "control_d" in its capabilities.
  platform.isXenDom0 = xenCapabilities.find("control_d") != std::string_view::npos;
  return platform;
}

Platform detectPlatform(const RootedFs& fs) {
  const auto cpuinfo = fs.readFile(paths::kProcCpuinfo);
  const auto xen = fs.readFile(paths::kXenCapabilities);
  return classifyPlatform(cpuinfo ? *cpuinfo : "", xen ? *xen : "");
}

}  // namespace vcpufold::agent
