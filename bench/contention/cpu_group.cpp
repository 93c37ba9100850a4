#include "cpu_group.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace vcpufold::bench {

namespace {

namespace fs = std::filesystem;

bool writeFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

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
    writeFile(root / "cgroup.subtree_control", "+cpu");
    writeFile(parent / "cgroup.subtree_control", "+cpu");
    written = writeFile(parent / name / "cpu.weight", std::to_string(static_cast<long>(weight)));
  } else {
    written = writeFile(parent / name / "cpu.shares", std::to_string(static_cast<long>(weight * 1024 / 100)));
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
  return writeFile(fs::path(directory_) / "cgroup.procs", std::to_string(pid));
}

}  // namespace vcpufold::bench
