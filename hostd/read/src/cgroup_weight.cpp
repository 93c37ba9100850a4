// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/cgroup_weight.h"

#include <string>

#include "vcpufold/common/system_paths.h"
#include "vcpufold/common/text_fields.h"

namespace vcpufold::hostd {

Expected<CpuCgroup> parseCpuCgroup(std::string_view procCgroup, bool cgroupV2) {
  for (const std::string_view line : splitFields(procCgroup, "\n")) {
    // hierarchy-ID:controller-list:cgroup-path; the path may itself hold ':'.
    const auto first = line.find(':');
    const auto second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) return Error{"not a /proc/PID/cgroup line: " + std::string(line)};
    const std::string_view id = line.substr(0, first);
    const std::string_view controllers = line.substr(first + 1, second - first - 1);
    const std::string_view path = line.substr(second + 1);
    if (path.empty() || path.front() != '/') return Error{"a cgroup path that is not absolute: " + std::string(line)};
    if (path.find("/../") != std::string_view::npos || path.ends_with("/.."))
      return Error{"a cgroup path that climbs: " + std::string(line)};
    if (cgroupV2) {
      if (id == "0" && controllers.empty()) return CpuCgroup{"", std::string(path)};
      continue;
    }
    for (const std::string_view controller : splitFields(controllers, ","))
      if (controller == "cpu") return CpuCgroup{std::string(controllers), std::string(path)};
  }
  return Error{cgroupV2 ? "no cgroup v2 line (0::/...)" : "no cgroup v1 hierarchy with the cpu controller"};
}

Expected<double> readProcessCpuWeight(const RootedFs& fs, pid_t pid, bool cgroupV2) {
  const std::string procPath = std::string(paths::kProcDir) + "/" + std::to_string(pid) + "/cgroup";
  auto text = fs.readFile(procPath);
  if (!text) return text.error();
  auto cgroup = parseCpuCgroup(*text, cgroupV2);
  if (!cgroup) return cgroup.error().withContext(procPath);
  std::string dir = std::string(paths::kCgroupRoot) + (cgroup->mount.empty() ? "" : "/" + cgroup->mount);
  if (cgroup->path != "/") dir += cgroup->path;
  const std::string file = dir + (cgroupV2 ? "/cpu.weight" : "/cpu.shares");
  auto value = fs.readFile(file);
  if (!value) return value.error();
  const auto fields = splitFields(*value, " \n");
  std::uint64_t weight = 0;
  if (fields.size() != 1 || !parseDecimal(fields[0], weight) || weight == 0)
    return Error{file + ": not a weight: " + *value};
  return static_cast<double>(weight);
}

}  // namespace vcpufold::hostd
