// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/systemd_cpuset_actuator.h"

#include <nlohmann/json.hpp>

#include "vcpufold/common/system_paths.h"
#include "vcpufold/protocol/cpulist.h"

namespace vcpufold::agent {
namespace {

constexpr const char* kStateFile = paths::kSystemdStateFile;

bool isTopLevelUnit(const std::string& name) {
  auto endsWith = [&name](std::string_view suffix) {
    return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return endsWith(".slice") || endsWith(".scope");
}

std::optional<protocol::CpuSet> readCpuList(const RootedFs& fs, const std::string& path) {
  auto text = fs.readFile(path);
  if (!text) return std::nullopt;
  auto cpus = protocol::parseCpuListFile(*text);
  if (!cpus) return std::nullopt;
  return *cpus;
}

struct SavedState {
  std::string cgroupRoot;
  std::set<std::string> units;
};

SavedState loadState(const RootedFs& fs) {
  auto text = fs.readFile(kStateFile);
  if (!text) return {};
  try {
    const auto json = nlohmann::json::parse(*text);
    return {json.at("cgroup_root").get<std::string>(), json.at("units").get<std::set<std::string>>()};
  } catch (const nlohmann::json::exception&) {
    return {};
  }
}

}  // namespace

bool SystemdCpusetActuator::systemdIsInit(const RootedFs& fs) { return fs.isDirectory(paths::kSystemdRunDir); }

bool SystemdCpusetActuator::hasLeftovers(const RootedFs& fs) { return fs.exists(kStateFile); }

SystemdCpusetActuator::SystemdCpusetActuator(RootedFs fs, std::string cgroupRoot, std::unique_ptr<SystemdUnits> units)
    : fs_(std::move(fs)),
      cgroupRoot_(std::move(cgroupRoot)),
      units_(std::move(units)),
      managed_(loadState(fs_).units) {}

Expected<void> SystemdCpusetActuator::saveState() const {
  if (auto made = fs_.makeDirectory(paths::kAgentStateDir); !made) return made;
  return fs_.replaceFile(kStateFile, nlohmann::json{{"cgroup_root", cgroupRoot_}, {"units", managed_}}.dump() + "\n");
}

Expected<ApplyResult> SystemdCpusetActuator::apply(const CpuSet& cpus, MonotonicTime) {
  ApplyResult result;
  std::optional<Error> firstError;
  for (const auto& unit : fs_.listDirectory(cgroupRoot_)) {
    if (!isTopLevelUnit(unit) || foreign_.count(unit) || !fs_.isDirectory(cgroupRoot_ + "/" + unit)) continue;
    const auto own = readCpuList(fs_, cgroupRoot_ + "/" + unit + "/cpuset.cpus");
    if (!managed_.count(unit)) {
      // Set by someone else (an administrator's AllowedCPUs=, even one naming
      // every CPU): that unit is theirs, never overwritten, and so never
      // "restored" to a value that was not what they set. What the agent
      // takes is always unset, which is what release puts back.
      if (own && !own->empty()) {
        foreign_.insert(unit);
        result.detail += "left " + unit + " alone (AllowedCPUs set elsewhere); ";
        continue;
      }
      managed_.insert(unit);
      if (auto saved = saveState(); !saved) return saved.error();
    }
    if (own && *own == cpus) continue;
    if (auto set = units_->setAllowedCpus(unit, cpus); !set) {
      if (!firstError) firstError = set.error();
      continue;
    }
    result.changed = true;
    result.detail += unit + " ";
  }
  if (result.changed) result.detail += "AllowedCPUs=" + protocol::formatCpuList(cpus);
  if (firstError) return *firstError;
  return result;
}

Expected<ApplyResult> SystemdCpusetActuator::release(MonotonicTime) {
  if (managed_.empty()) return ApplyResult{};
  if (auto done = restore(); !done) return done.error();
  return ApplyResult{true, "AllowedCPUs= reset on every unit of ours"};
}

Expected<void> SystemdCpusetActuator::restore() {
  auto done = restoreFromState(fs_, *units_);
  foreign_.clear();
  managed_ = loadState(fs_).units;  // empty after success; what is left otherwise
  return done;
}

Expected<void> SystemdCpusetActuator::restoreFromState(const RootedFs& fs, SystemdUnits& units) {
  std::optional<Error> firstError;
  const SavedState state = loadState(fs);
  for (const auto& unit : state.units) {
    // A unit that is gone (a closed session's scope) took its run-time settings with it.
    if (!fs.isDirectory(state.cgroupRoot + "/" + unit)) continue;
    if (auto reset = units.setAllowedCpus(unit, {}); !reset && !firstError) firstError = reset.error();
  }
  if (firstError) return *firstError;
  return fs.removeFile(kStateFile);
}

}  // namespace vcpufold::agent
