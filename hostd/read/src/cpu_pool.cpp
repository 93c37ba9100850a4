// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/cpu_pool.h"

#include <algorithm>
#include <vector>

#include "vcpufold/common/system_paths.h"
#include "vcpufold/protocol/cpulist.h"

namespace vcpufold::hostd {

Expected<VmCpuPool> readVmCpuPool(const RootedFs& fs, const std::string& poolCgroup) {
  const std::string root = paths::kCgroupRoot;
  const std::vector<std::string> candidates =
      poolCgroup.empty()
          ? std::vector<std::string>{root + "/machine.slice/cpuset.cpus.effective",
                                     root + "/cpuset/machine.slice/cpuset.effective_cpus",
                                     root + "/cpuset/machine/cpuset.effective_cpus", std::string(paths::kCpuOnline)}
          : std::vector<std::string>{root + "/" + poolCgroup + "/cpuset.cpus.effective",
                                     root + "/cpuset/" + poolCgroup + "/cpuset.effective_cpus"};
  for (const std::string& path : candidates) {
    auto text = fs.readFile(path);
    if (!text) continue;
    auto cpus = protocol::parseCpuListFile(*text);
    if (!cpus) return cpus.error().withContext(path);
    if (cpus->empty()) continue;
    return VmCpuPool{*cpus, path};
  }
  if (!poolCgroup.empty())
    return Error{"inventory.pool_cgroup \"" + poolCgroup + "\": no CPUs in " + candidates[0] + " or " + candidates[1]};
  return Error{"no machine cgroup cpuset and no " + std::string(paths::kCpuOnline)};
}

}  // namespace vcpufold::hostd
