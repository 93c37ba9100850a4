// SPDX-License-Identifier: GPL-2.0-or-later
#include "cpu_group.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "bench_text.h"

namespace vcpufold::bench {

namespace {

namespace fs = std::filesystem;

bool hasCgroupV2Cpu() {
  std::ifstream controllers("/sys/fs/cgroup/cgroup.controllers");
  std::string word;
  while (controllers >> word)
    if (word == "cpu") return true;
  return false;
}

}  // namespace

CpuGroup::CpuGroup(const std::string& name, double weight) {
  const bool v2 = hasCgroupV2Cpu();
  const fs::path root = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/cpu";
  root_ = root.string();
  v2_ = v2;
  if (!fs::exists(root / "cgroup.procs")) {
    error_ = "no cpu cgroup controller at " + root.string();
    return;
  }
  const fs::path parent = root / "vcpufold-bench";
  std::error_code ignored;
  fs::create_directories(parent / name, ignored);
  directory_ = (parent / name).string();
  bool written = false;
  if (v2) {
    writeWholeFile((root / "cgroup.subtree_control").string(), "+cpu");
    writeWholeFile((parent / "cgroup.subtree_control").string(), "+cpu");
    written = writeWholeFile((parent / name / "cpu.weight").string(), std::to_string(static_cast<long>(weight)));
  } else {
    written =
        writeWholeFile((parent / name / "cpu.shares").string(), std::to_string(static_cast<long>(weight * 1024 / 100)));
  }
  if (!written) error_ = directory_ + ": cannot set the weight: " + std::strerror(errno);
}

CpuGroup::~CpuGroup() {
  if (directory_.empty()) return;
  std::error_code ignored;
  fs::remove(directory_, ignored);  // rmdir: empty once the VM has exited
  fs::remove(fs::path(directory_).parent_path(), ignored);
}

bool CpuGroup::adopt(pid_t pid) {
  if (!ok()) return false;
  return writeWholeFile((fs::path(directory_) / "cgroup.procs").string(), std::to_string(pid));
}

bool CpuGroup::releaseThread(pid_t tid) {
  if (!ok() || v2_) return false;
  return writeWholeFile((fs::path(root_) / "tasks").string(), std::to_string(tid));
}

}  // namespace vcpufold::bench
