// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Emulated guests for the integration tests of hostd (their target defines
// VCPUFOLD_EMULATED_VM and VCPUFOLD_AGENT_BINARY).

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "child_process.h"
#include "fixture_tree.h"

namespace vcpufold::testing {

// An emulated VM (four vCPU threads, `busy` of them burning) and a real
// agent for it on unix-listen, in `dir`; with `cpus`, every thread of the VM
// pinned there (as vcpupin pins a VM's vCPU threads).
struct EmulatedGuest {
  std::unique_ptr<FixtureTree> tree;
  std::vector<std::unique_ptr<ChildProcess>> processes;
};

inline EmulatedGuest startEmulatedGuest(const std::string& dir, const std::string& vm, const std::string& busy,
                                        const std::string& cpus = "") {
  EmulatedGuest guest;
  guest.tree = std::make_unique<FixtureTree>("lab-guest-4vcpu");
  // hostd's decisions are under test, whatever the fixture kernel's class default (kernel_class.h).
  guest.tree->write("/etc/vcpufold/agent.toml", "[agent]\ninterval_ms = 200\nfold = \"always\"\n");
  guest.tree->write("/sys/fs/cgroup/cgroup.procs", "");
  guest.tree->write("/sys/fs/cgroup/system.slice/cpuset.cpus", "\n");
  std::vector<std::string> vmArgs{"--name", vm, "--dir", dir, "--vcpus", "4", "--busy", busy, "--seconds", "120"};
  if (!cpus.empty()) vmArgs.insert(vmArgs.begin(), {"-c", cpus, VCPUFOLD_EMULATED_VM});
  guest.processes.push_back(std::make_unique<ChildProcess>(cpus.empty() ? VCPUFOLD_EMULATED_VM : "/usr/bin/taskset",
                                                           vmArgs, dir + "/" + vm + ".vm.log"));
  guest.processes.push_back(
      std::make_unique<ChildProcess>(VCPUFOLD_AGENT_BINARY,
                                     std::vector<std::string>{"--root", guest.tree->root().string(), "--port",
                                                              "unix-listen:" + dir + "/" + vm + ".hint.sock"},
                                     dir + "/" + vm + ".agent.log"));
  return guest;
}

// A root for hostd (--root) in which it sees these guests' processes (their
// /proc/PID, through symlinks) and /sys as they are, but a /proc/stat
// captured once: no busy time moves, so no load of this machine's other
// processes enters hostd's capacity. For tests whose subject is hostd's
// decision, not this machine's load. Returns the root.
inline std::filesystem::path hostRootWithoutOtherLoad(const std::filesystem::path& at,
                                                      const std::vector<const EmulatedGuest*>& guests) {
  namespace fs = std::filesystem;
  fs::create_directories(at / "proc");
  fs::create_directories(at / "run");
  fs::create_symlink("/sys", at / "sys");
  // procfs files say size 0: read, not copied.
  std::ifstream live("/proc/stat");
  std::ofstream(at / "proc" / "stat") << live.rdbuf();
  for (const EmulatedGuest* guest : guests) {
    const std::string pid = std::to_string(guest->processes.front()->pid());
    fs::create_symlink("/proc/" + pid, at / "proc" / pid);
  }
  return at;
}

}  // namespace vcpufold::testing
