// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/common/cpu_list_files.h"

#include "vcpufold/common/system_paths.h"
#include "vcpufold/protocol/cpulist.h"

namespace vcpufold {

protocol::CpuSet readOptionalCpuListFile(const RootedFs& fs, const std::string& path) {
  auto text = fs.readFile(path);
  if (!text) return {};
  // Linux 6.1 prints " (null)" in nohz_full when the boot line has no nohz_full=.
  if (text->find("(null)") != std::string::npos) return {};
  auto cpus = protocol::parseCpuListFile(*text);
  return cpus ? *cpus : protocol::CpuSet{};
}

protocol::CpuSet readQuietCpus(const RootedFs& fs) {
  return readOptionalCpuListFile(fs, paths::kCpuNohzFull) | readOptionalCpuListFile(fs, paths::kCpuIsolated);
}

}  // namespace vcpufold
