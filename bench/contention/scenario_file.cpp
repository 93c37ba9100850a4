// SPDX-License-Identifier: GPL-2.0-or-later
#include "scenario_file.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "guest_workload.h"
#include "vcpufold/common/toml_reader.h"
#include "vcpufold/common/toml_text.h"

namespace vcpufold::bench {

namespace {

constexpr unsigned kMaxVcpus = 64;  // the emulated VM's limit
constexpr unsigned kMaxVms = 64;

std::string join(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += (text.empty() ? "" : "\n") + line;
  return text;
}

}  // namespace

std::vector<Scenario::Phase> Scenario::phases() const {
  std::vector<double> edges{0.0};
  for (const auto& vm : vms)
    for (double at : changeTimes(vm.schedule, durationSeconds)) edges.push_back(at);
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end(), [](double a, double b) { return std::abs(a - b) < 1e-9; }),
              edges.end());
  std::vector<Phase> result;
  for (std::size_t i = 0; i < edges.size(); ++i) {
    Phase phase{edges[i], i + 1 < edges.size() ? edges[i + 1] : durationSeconds, {}};
    for (const auto& vm : vms) phase.tasks.push_back(tasksAt(vm.schedule, phase.from));
    if (!result.empty() && result.back().tasks == phase.tasks)
      result.back().to = phase.to;
    else
      result.push_back(phase);
  }
  return result;
}

std::optional<std::vector<Scenario>> parseScenarioFile(const std::string& text, const std::string& source,
                                                       std::string& error) {
  auto parsed = parseTomlText(text, source);
  if (!parsed) {
    error = parsed.error().message;
    return std::nullopt;
  }
  const toml::table& root = *parsed;
  std::vector<std::string> problems;
  TomlReader top(root, problems);
  Scenario base;
  base.source = source;
  base.name = std::filesystem::path(source).stem().string();
  top.string("name", base.name);
  top.string("description", base.description);
  top.unsignedIntegerIn("pcpus", base.pcpus, 1, 1024);
  top.numberIn("warmup_s", base.warmupSeconds, 0, 600);
  top.numberIn("duration_s", base.durationSeconds, 0.5, 3600);
  top.numberIn("search_s", base.searchSeconds, 0, 3600);
  unsigned repetitions = 0;
  top.unsignedIntegerIn("repetitions", repetitions, 1, 100);
  if (repetitions > 0) base.repetitions = repetitions;
  for (const auto& name : top.strings("modes")) {
    if (auto mode = modeFromName(name))
      base.modes.push_back(*mode);
    else
      problems.push_back("modes: \"" + name +
                         "\" is not a mode (unfolded, steal-law, vcpufold, static-fair, always-1, best-static, "
                         "clairvoyant)");
  }
  if (base.modes.empty()) base.modes.assign(std::begin(kAllModes), std::end(kAllModes));
  auto workloads = top.strings("workloads");
  for (const auto& workload : workloads) {
    std::vector<WorkloadKind> kinds;
    if (!parseWorkloadMix(workload, kinds)) problems.push_back("workloads: \"" + workload + "\" is not a workload");
  }

  std::vector<bool> ownWorkload;
  const toml::array* vms = top.array("vm");
  if (!vms || vms->empty()) problems.push_back("vm: at least one [[vm]] table");
  for (std::size_t i = 0; vms && i < vms->size(); ++i) {
    const std::string prefix = "vm[" + std::to_string(i) + "].";
    const auto* table = (*vms)[i].as_table();
    if (!table) {
      problems.push_back(prefix + ": expected a table");
      continue;
    }
    TomlReader keys(*table, problems, prefix);
    VmSpec vm;
    vm.name = "vm-" + std::to_string(i + 1);
    keys.string("name", vm.name);
    unsigned count = 1;
    keys.unsignedIntegerIn("count", count, 1, kMaxVms);
    keys.unsignedIntegerIn("vcpus", vm.vcpus, 1, kMaxVcpus);
    keys.unsignedIntegerIn("threads_per_core", vm.threadsPerCore, 1, 8);
    if (vm.vcpus % vm.threadsPerCore != 0) problems.push_back(prefix + "threads_per_core: must divide vcpus");
    keys.numberIn("weight", vm.weight, 1, 10000);
    std::optional<std::string> workload;
    if (keys.has("workload")) {
      std::string named;
      keys.string("workload", named);
      workload = named;
      std::vector<WorkloadKind> kinds;
      if (!parseWorkloadMix(named, kinds))
        problems.push_back(prefix + "workload: \"" + named +
                           "\" is not compute, spinlock, pvspinlock, message or a mix");
      vm.workload = named;
    } else if (workloads.empty()) {
      problems.push_back(prefix + "workload: missing (or give the file a workloads list)");
    }
    vm.schedule.first = vm.vcpus;
    if (keys.has("schedule")) {
      std::string scheduleText;
      keys.string("schedule", scheduleText);
      std::string why;
      if (auto schedule = parseSchedule(scheduleText, why))
        vm.schedule = *schedule;
      else
        problems.push_back(prefix + "schedule: " + why);
    }
    keys.boolean("agent", vm.agent);
    keys.rejectUnknownKeys({"name", "count", "vcpus", "threads_per_core", "weight", "workload", "schedule", "agent"});
    for (unsigned copy = 1; copy <= count; ++copy) {
      VmSpec instance = vm;
      if (count > 1) instance.name = vm.name + "-" + std::to_string(copy);
      base.vms.push_back(instance);
      ownWorkload.push_back(workload.has_value());
    }
  }
  top.rejectUnknownKeys({"name", "description", "pcpus", "warmup_s", "duration_s", "search_s", "repetitions",
                         "modes", "workloads", "vm"});
  std::set<std::string> names;
  for (const auto& vm : base.vms) {
    if (!names.insert(vm.name).second) problems.push_back("vm: the name \"" + vm.name + "\" appears twice");
    if (vm.name.empty() || vm.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_") != std::string::npos)
      problems.push_back("vm: the name \"" + vm.name + "\" must be lower-case letters, digits, - and _");
  }
  if (base.vms.size() > kMaxVms) problems.push_back("vm: at most " + std::to_string(kMaxVms) + " VMs");
  if (!problems.empty()) {
    error = source + ": " + join(problems);
    return std::nullopt;
  }
  std::vector<Scenario> scenarios;
  if (workloads.empty()) return std::vector<Scenario>{base};
  for (const auto& workload : workloads) {
    Scenario variant = base;
    variant.name = base.name + "/" + workload;
    for (std::size_t i = 0; i < variant.vms.size(); ++i)
      if (!ownWorkload[i]) variant.vms[i].workload = workload;
    scenarios.push_back(variant);
  }
  return scenarios;
}

std::optional<std::vector<Scenario>> readScenarioFile(const std::string& path, std::string& error) {
  std::ifstream file(path);
  if (!file) {
    error = path + ": cannot be read";
    return std::nullopt;
  }
  std::stringstream text;
  text << file.rdbuf();
  return parseScenarioFile(text.str(), path, error);
}

}  // namespace vcpufold::bench
