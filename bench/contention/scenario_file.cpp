// SPDX-License-Identifier: GPL-2.0-or-later
#include "scenario_file.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "guest_workload.h"
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

// Reads typed keys from one table and notes what is wrong or unknown.
class Keys {
 public:
  Keys(const toml::table& table, std::string prefix, std::vector<std::string>& problems)
      : table_(table), prefix_(std::move(prefix)), problems_(problems) {}

  template <typename T>
  std::optional<T> get(const std::string& key, const char* expected) {
    seen_.insert(key);
    const auto* node = table_.get(key);
    if (!node) return std::nullopt;
    if constexpr (std::is_same_v<T, double>) {
      if (auto value = node->value<double>()) return *value;
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
      if (node->is_integer()) return node->value<std::int64_t>();
    } else {
      if (auto value = node->value<T>()) return *value;
    }
    problem(key, std::string("expected ") + expected);
    return std::nullopt;
  }
  void number(const std::string& key, double& out, double low, double high) {
    if (auto value = get<double>(key, "a number")) {
      if (!std::isfinite(*value) || *value < low || *value > high)
        problem(key, "must be within " + shortNumber(low) + ".." + shortNumber(high));
      else
        out = *value;
    }
  }
  void integer(const std::string& key, unsigned& out, unsigned low, unsigned high) {
    if (auto value = get<std::int64_t>(key, "an integer")) {
      if (*value < low || *value > high)
        problem(key, "must be within " + std::to_string(low) + ".." + std::to_string(high));
      else
        out = static_cast<unsigned>(*value);
    }
  }
  const toml::array* array(const std::string& key) {
    seen_.insert(key);
    const auto* node = table_.get(key);
    if (node && !node->is_array()) problem(key, "expected an array");
    return node ? node->as_array() : nullptr;
  }
  void problem(const std::string& key, const std::string& why) { problems_.push_back(prefix_ + key + ": " + why); }
  void rejectUnknown() {
    for (const auto& [key, value] : table_)
      if (!seen_.count(std::string(key.str()))) problems_.push_back(prefix_ + std::string(key.str()) + ": unknown key");
  }

 private:
  static std::string shortNumber(double value) {
    std::ostringstream out;
    out << value;
    return out.str();
  }
  const toml::table& table_;
  std::string prefix_;
  std::vector<std::string>& problems_;
  std::set<std::string> seen_;
};

std::vector<std::string> strings(const toml::array* array, Keys& keys, const std::string& key) {
  std::vector<std::string> values;
  if (!array) return values;
  for (const auto& element : *array) {
    if (auto text = element.value<std::string>())
      values.push_back(*text);
    else
      keys.problem(key, "expected an array of strings");
  }
  return values;
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
  Keys top(root, "", problems);
  Scenario base;
  base.source = source;
  base.name = top.get<std::string>("name", "a string").value_or(std::filesystem::path(source).stem().string());
  base.description = top.get<std::string>("description", "a string").value_or("");
  top.integer("pcpus", base.pcpus, 1, 1024);
  top.number("warmup_s", base.warmupSeconds, 0, 600);
  top.number("duration_s", base.durationSeconds, 0.5, 3600);
  top.number("search_s", base.searchSeconds, 0, 3600);
  unsigned repetitions = 0;
  top.integer("repetitions", repetitions, 1, 100);
  if (repetitions > 0) base.repetitions = repetitions;
  for (const auto& name : strings(top.array("modes"), top, "modes")) {
    if (auto mode = modeFromName(name))
      base.modes.push_back(*mode);
    else
      top.problem("modes", "\"" + name +
                               "\" is not a mode (unfolded, steal-law, vcpufold, static-fair, always-1, "
                               "best-static, clairvoyant)");
  }
  if (base.modes.empty()) base.modes.assign(std::begin(kAllModes), std::end(kAllModes));
  auto workloads = strings(top.array("workloads"), top, "workloads");
  for (const auto& workload : workloads) {
    std::vector<WorkloadKind> kinds;
    if (!parseWorkloadMix(workload, kinds)) top.problem("workloads", "\"" + workload + "\" is not a workload");
  }

  std::vector<bool> ownWorkload;
  const toml::array* vms = top.array("vm");
  if (!vms || vms->empty()) top.problem("vm", "at least one [[vm]] table");
  for (std::size_t i = 0; vms && i < vms->size(); ++i) {
    const std::string prefix = "vm[" + std::to_string(i) + "].";
    const auto* table = (*vms)[i].as_table();
    if (!table) {
      problems.push_back(prefix + ": expected a table");
      continue;
    }
    Keys keys(*table, prefix, problems);
    VmSpec vm;
    vm.name = keys.get<std::string>("name", "a string").value_or("vm-" + std::to_string(i + 1));
    unsigned count = 1;
    keys.integer("count", count, 1, kMaxVms);
    keys.integer("vcpus", vm.vcpus, 1, kMaxVcpus);
    keys.integer("threads_per_core", vm.threadsPerCore, 1, 8);
    if (vm.vcpus % vm.threadsPerCore != 0) keys.problem("threads_per_core", "must divide vcpus");
    keys.number("weight", vm.weight, 1, 10000);
    const auto workload = keys.get<std::string>("workload", "a string");
    if (workload) {
      std::vector<WorkloadKind> kinds;
      if (!parseWorkloadMix(*workload, kinds))
        keys.problem("workload", "\"" + *workload + "\" is not compute, spinlock, pvspinlock, message or a mix");
      vm.workload = *workload;
    } else if (workloads.empty()) {
      keys.problem("workload", "missing (or give the file a workloads list)");
    }
    vm.schedule.first = vm.vcpus;
    if (auto scheduleText = keys.get<std::string>("schedule", "a string")) {
      std::string why;
      if (auto schedule = parseSchedule(*scheduleText, why))
        vm.schedule = *schedule;
      else
        keys.problem("schedule", why);
    }
    vm.agent = keys.get<bool>("agent", "true or false").value_or(true);
    keys.rejectUnknown();
    for (unsigned copy = 1; copy <= count; ++copy) {
      VmSpec instance = vm;
      if (count > 1) instance.name = vm.name + "-" + std::to_string(copy);
      base.vms.push_back(instance);
      ownWorkload.push_back(workload.has_value());
    }
  }
  top.rejectUnknown();
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
