// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/cgroup_cpuset_actuator.h"

#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "vcpufold/common/monotonic_clock.h"
#include "vcpufold/common/process_stat.h"
#include "vcpufold/common/system_paths.h"
#include "vcpufold/protocol/cpulist.h"

namespace vcpufold::agent {
namespace {

constexpr const char* kStateFile = paths::kCpusetStateFile;

std::vector<std::string> words(std::string_view text) {
  std::istringstream in{std::string(text)};
  return {std::istream_iterator<std::string>(in), {}};
}

// The possible CPUs as a cpulist, else the online ones.
std::string allCpus(const RootedFs& fs) {
  for (const char* path : {paths::kCpuPossible, paths::kCpuOnline}) {
    auto text = fs.readFile(path);
    if (!text) continue;
    auto cpus = protocol::parseCpuListFile(*text);
    if (cpus && !cpus->empty()) return protocol::formatCpuList(*cpus);
  }
  return "0";
}

// A cgroup whose cpuset.cpus someone set (even to every CPU) is theirs: it is
// never overwritten, so release, which empties what the agent set, never
// replaces a value the agent did not find empty.
bool setElsewhere(std::string_view ownCpus) {
  auto own = protocol::parseCpuListFile(ownCpus);
  return !own || !own->empty();
}

bool sameCpus(std::string_view a, std::string_view b) {
  auto left = protocol::parseCpuListFile(a);
  auto right = protocol::parseCpuListFile(b);
  return left && right && *left == *right;
}

// The record of cgroups handed back at every CPU: removed when none is left.
Expected<void> writeHandedBack(const RootedFs& fs, const std::string& cgroupRoot,
                               const std::map<std::string, std::string>& cgroups) {
  if (cgroups.empty()) {
    if (!fs.exists(paths::kCpusetHandedBackFile)) return {};
    return fs.removeFile(paths::kCpusetHandedBackFile);
  }
  const nlohmann::json json{{"cgroup_root", cgroupRoot}, {"cgroups", cgroups}};
  if (auto made = fs.makeDirectory(paths::kAgentStateDir); !made) return made;
  return fs.replaceFile(paths::kCpusetHandedBackFile, json.dump() + "\n");
}

bool hasWord(std::string_view text, std::string_view word) {
  for (const auto& item : words(text))
    if (item == word) return true;
  return false;
}

}  // namespace

std::optional<std::string> findCgroup2Mount(std::string_view mountinfo) {
  // "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS"
  std::istringstream lines{std::string(mountinfo)};
  for (std::string line; std::getline(lines, line);) {
    const auto fields = words(line);
    for (std::size_t i = 5; i + 1 < fields.size(); ++i)
      if (fields[i] == "-" && fields[i + 1] == "cgroup2" && fields.size() > 4) return fields[4];
  }
  return std::nullopt;
}

bool isKernelThread(std::string_view procPidStat) {
  const auto stat = parseProcessStat(procPidStat);
  return stat && stat->isKernelThread();
}

Expected<void> removeCgroupMovingTasks(const RootedFs& fs, const std::string& root, const std::string& cgroup) {
  Expected<void> removed;
  for (int attempt = 0; attempt < 20; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(25));
    if (auto procs = fs.readFile(cgroup + "/cgroup.procs"))
      for (const auto& pid : words(*procs)) (void)fs.writeExisting(root + "/cgroup.procs", pid);
    removed = fs.removeDirectory(cgroup);
    if (removed) break;
  }
  return removed;
}

Expected<std::string> CgroupCpusetActuator::findUsableRoot(const RootedFs& fs) {
  auto mountinfo = fs.readFile(paths::kProcMountinfo);
  if (!mountinfo) return mountinfo.error();
  auto root = findCgroup2Mount(*mountinfo);
  if (!root) return Error{"no cgroup2 filesystem is mounted"};
  auto controllers = fs.readFile(*root + "/cgroup.controllers");
  if (!controllers) return controllers.error();
  if (!hasWord(*controllers, "cpuset")) return Error{*root + ": the cpuset controller is not available"};
  return *root;
}

CgroupCpusetActuator::CgroupCpusetActuator(KnobWriter& knobs, std::string cgroupRoot, bool moveRootTasks,
                                           std::chrono::milliseconds slice)
    : knobs_(knobs), moveRootTasks_(moveRootTasks), slice_(slice) {
  state_ = loadState(knobs_.fs()).value_or(State{});
  state_.cgroupRoot = std::move(cgroupRoot);
}

std::optional<CgroupCpusetActuator::State> CgroupCpusetActuator::loadState(const RootedFs& fs) {
  auto text = fs.readFile(kStateFile);
  if (!text) return std::nullopt;
  try {
    const auto json = nlohmann::json::parse(*text);
    State state;
    state.cgroupRoot = json.at("cgroup_root").get<std::string>();
    state.enabledCpuset = json.at("enabled_cpuset").get<bool>();
    state.createdFoldCgroup = json.at("created_fold_cgroup").get<bool>();
    state.managed = json.at("managed").get<std::set<std::string>>();
    return state;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

Expected<void> CgroupCpusetActuator::writeState(const RootedFs& fs, const State& state) {
  const nlohmann::json json{{"cgroup_root", state.cgroupRoot},
                            {"enabled_cpuset", state.enabledCpuset},
                            {"created_fold_cgroup", state.createdFoldCgroup},
                            {"managed", state.managed}};
  if (auto made = fs.makeDirectory(paths::kAgentStateDir); !made) return made;
  return fs.replaceFile(kStateFile, json.dump() + "\n");
}

Expected<void> CgroupCpusetActuator::saveState() const { return writeState(knobs_.fs(), state_); }

Expected<bool> CgroupCpusetActuator::ensureCpusetEnabled() {
  const std::string control = state_.cgroupRoot + "/cgroup.subtree_control";
  auto current = knobs_.fs().readFile(control);
  if (!current) return current.error();
  if (hasWord(*current, "cpuset")) return false;
  state_.enabledCpuset = true;
  if (auto saved = saveState(); !saved) return saved.error();
  if (auto written = knobs_.fs().writeExisting(control, "+cpuset"); !written) return written.error();
  return true;
}

Expected<void> CgroupCpusetActuator::ensureFoldCgroup() {
  const std::string fold = state_.cgroupRoot + "/" + kFoldCgroupName;
  if (knobs_.fs().isDirectory(fold)) return {};
  state_.createdFoldCgroup = true;
  if (auto saved = saveState(); !saved) return saved.error();
  return knobs_.fs().makeDirectory(fold);
}

Expected<int> CgroupCpusetActuator::moveRootTasks() {
  const std::string fold = state_.cgroupRoot + "/" + kFoldCgroupName;
  auto procs = knobs_.fs().readFile(state_.cgroupRoot + "/cgroup.procs");
  if (!procs) return procs.error();
  // Each move waits for the kernel (an RCU grace period, slow while the
  // preferred CPUs are flooded): a slice at a time, at least one task each.
  const MonotonicTime until = monotonicNow() + slice_;
  int moved = 0;
  movesPending_ = false;
  // The agent itself stays in the root cgroup, which a parked partition
  // confines to the preferred CPUs anyway (housekeeping_steering.h).
  const std::string self = std::to_string(::getpid());
  for (const auto& pid : words(*procs)) {
    if (pid == "1" || pid == self) continue;
    auto stat = knobs_.fs().readFile(std::string(paths::kProcDir) + "/" + pid + "/stat");
    if (!stat || isKernelThread(*stat)) continue;  // gone, or a kernel thread
    if (moved > 0 && monotonicNow() >= until) {
      movesPending_ = true;
      break;
    }
    // A task may exit between the read and the write: not an error.
    if (knobs_.fs().writeExisting(fold + "/cgroup.procs", pid)) ++moved;
  }
  if (!movesPending_) {
    auto after = knobs_.fs().readFile(state_.cgroupRoot + "/cgroup.procs");
    rootTasksAfterLastPass_ = after ? std::optional<std::string>(*after) : std::nullopt;
  }
  return moved;
}

std::string CgroupCpusetActuator::movedText(int moved) const {
  return "moved " + std::to_string(moved) + " tasks into " + kFoldCgroupName +
         (movesPending_ ? " (more follow, a slice at a time)" : "");
}

Expected<ApplyResult> CgroupCpusetActuator::doDeferredWork(MonotonicTime) {
  ApplyResult result;
  if (!movesPending_) return result;
  auto moved = moveRootTasks();
  if (!moved) {
    movesPending_ = false;
    return moved.error().withContext("move root tasks");
  }
  result.changed = *moved > 0;
  if (*moved > 0) result.detail = movedText(*moved);
  return result;
}

Expected<ApplyResult> CgroupCpusetActuator::apply(const CpuSet& cpus, MonotonicTime now) {
  ApplyResult result;
  const std::string list = protocol::formatCpuList(cpus);
  auto enabled = ensureCpusetEnabled();
  if (!enabled) return enabled.error().withContext("enable cpuset");
  result.changed = *enabled;

  if (moveRootTasks_)
    if (auto made = ensureFoldCgroup(); !made) return made.error().withContext("make " + std::string(kFoldCgroupName));

  std::optional<Error> firstError;
  std::vector<std::string> written;
  for (const auto& name : knobs_.fs().listDirectory(state_.cgroupRoot)) {
    const std::string cgroup = state_.cgroupRoot + "/" + name;
    if (!knobs_.fs().isDirectory(cgroup) || foreign_.count(name) || name == kParkedCgroupName) continue;
    if (!state_.managed.count(name)) {
      auto own = knobs_.fs().readFile(cgroup + "/cpuset.cpus");
      if (!own) continue;  // no cpuset files yet: the controller is not enabled above it
      auto partition = knobs_.fs().readFile(cgroup + "/cpuset.cpus.partition");
      const bool isPartition = partition && words(*partition).size() > 0 && words(*partition)[0] != "member";
      bool ours = !setElsewhere(*own) && !isPartition;
      if (!ours && !isPartition) {
        // Every CPU, written by a restore the kernel would not let empty it:
        // still ours while it holds exactly that; anything else is someone's.
        if (!handedBack_) handedBack_ = handedBack(knobs_.fs(), state_.cgroupRoot);
        if (auto entry = handedBack_->find(name); entry != handedBack_->end()) {
          ours = sameCpus(entry->second, *own);
          handedBack_->erase(entry);
          if (ours) {
            state_.managed.insert(name);
            if (auto saved = saveState(); !saved) return saved.error();
          }
          // The state file holds it now, or it is someone else's: either way
          // the record no longer speaks for it.
          if (auto kept = writeHandedBack(knobs_.fs(), state_.cgroupRoot, *handedBack_); !kept) return kept.error();
        }
      }
      if (!ours) {
        foreign_.insert(name);
        result.detail += "left " + name + " alone (its cpuset.cpus is set elsewhere); ";
        continue;
      }
      if (!state_.managed.count(name)) {
        state_.managed.insert(name);
        if (auto saved = saveState(); !saved) return saved.error();
      }
    }
    auto outcome = knobs_.write(cgroup + "/cpuset.cpus", list, now, KnobValueKind::CpuList);
    if (!outcome) {
      if (!firstError) firstError = outcome.error();
      continue;
    }
    if (*outcome == KnobOutcome::Written) written.push_back(name);
  }
  if (!written.empty()) {
    result.changed = true;
    result.detail += "cpuset.cpus=" + list + " in";
    for (const auto& name : written) result.detail += " " + name;
  }
  if (firstError) return *firstError;
  // The cgroups hold their new set already; root tasks follow as deferred
  // work, after the hint is answered: on a loaded guest a single move waited
  // for the kernel for up to two seconds, and apply() runs before every
  // answer (the same fold again included).
  if (moveRootTasks_ && !movesPending_) {
    // A pass only when a task may have come into the root cgroup since the
    // last one (or none ran yet): one read here instead of one per task there.
    auto rootTasks = knobs_.fs().readFile(state_.cgroupRoot + "/cgroup.procs");
    movesPending_ = !rootTasks || !rootTasksAfterLastPass_ || *rootTasks != *rootTasksAfterLastPass_;
  }
  return result;
}

Expected<ApplyResult> CgroupCpusetActuator::prepare(MonotonicTime) {
  auto enabled = ensureCpusetEnabled();
  if (!enabled) return enabled.error().withContext("enable cpuset");
  return ApplyResult{*enabled, *enabled ? "cpuset controller enabled in " + state_.cgroupRoot +
                                              "/cgroup.subtree_control ahead of a fold (no CPU restricted)"
                                        : ""};
}

Expected<ApplyResult> CgroupCpusetActuator::release(MonotonicTime) {
  // Nothing folded: a controller that prepare() enabled stays until stop, so
  // that the next fold's answer does not wait for every task to move.
  if (!state_.createdFoldCgroup && state_.managed.empty()) return ApplyResult{};
  if (auto done = undo(state_.enabledCpuset); !done) return done.error();
  return ApplyResult{true, "cgroups back as they were (no cpuset restriction of ours)"};
}

Expected<void> CgroupCpusetActuator::restore() { return undo(false); }

Expected<void> CgroupCpusetActuator::undo(bool keepController) {
  movesPending_ = false;
  rootTasksAfterLastPass_.reset();
  auto restored = restoreFromState(knobs_.fs(), keepController);
  foreign_.clear();
  handedBack_.reset();
  // On failure the state file still says what is left to undo; keep following it.
  const std::string root = state_.cgroupRoot;
  state_ = loadState(knobs_.fs()).value_or(State{});
  state_.cgroupRoot = root;
  return restored;
}

bool CgroupCpusetActuator::hasLeftovers(const RootedFs& fs) { return fs.exists(kStateFile); }

std::map<std::string, std::string> CgroupCpusetActuator::handedBack(const RootedFs& fs, const std::string& cgroupRoot) {
  auto text = fs.readFile(paths::kCpusetHandedBackFile);
  if (!text) return {};
  try {
    const auto json = nlohmann::json::parse(*text);
    if (json.at("cgroup_root").get<std::string>() != cgroupRoot) return {};
    return json.at("cgroups").get<std::map<std::string, std::string>>();
  } catch (const nlohmann::json::exception&) {
    return {};  // unreadable: every such cgroup is someone else's, the safe reading
  }
}

Expected<void> CgroupCpusetActuator::restoreFromState(const RootedFs& fs, bool keepController) {
  auto state = loadState(fs);
  if (!state) return {};
  std::optional<Error> firstError;
  auto note = [&firstError](Expected<void> step) {
    if (!step && !firstError) firstError = step.error();
  };
  auto handed = handedBack(fs, state->cgroupRoot);
  const auto handedBefore = handed;
  for (const auto& name : state->managed) {
    if (name == kFoldCgroupName) continue;  // removed below, tasks first
    const std::string cpus = state->cgroupRoot + "/" + name + "/cpuset.cpus";
    if (!fs.exists(cpus)) continue;
    // Empty means "inherit", as before we came; but the kernel refuses (ENOSPC)
    // to empty cpuset.cpus of a cgroup that has tasks. Then all possible CPUs
    // do the same: nothing is restricted, and CPUs onlined later are included.
    // Recorded, so that the next fold knows the value for its own.
    if (fs.writeExisting(cpus, "\n")) {
      handed.erase(name);
      continue;
    }
    const std::string every = allCpus(fs);
    auto filled = fs.writeExisting(cpus, every);
    if (filled) handed[name] = every;
    note(filled);
  }
  if (handed != handedBefore) note(writeHandedBack(fs, state->cgroupRoot, handed));
  const std::string fold = state->cgroupRoot + "/" + kFoldCgroupName;
  if (state->createdFoldCgroup && fs.isDirectory(fold)) note(removeCgroupMovingTasks(fs, state->cgroupRoot, fold));
  if (firstError) return *firstError;
  if (keepController && state->enabledCpuset) {
    // What is left to undo at stop, or by --restore after a crash: the controller.
    State left;
    left.cgroupRoot = state->cgroupRoot;
    left.enabledCpuset = true;
    return writeState(fs, left);
  }
  // Give the controller back only if we enabled it; others may use it by now (EBUSY): theirs.
  if (state->enabledCpuset) (void)fs.writeExisting(state->cgroupRoot + "/cgroup.subtree_control", "-cpuset");
  return fs.removeFile(kStateFile);
}

}  // namespace vcpufold::agent
