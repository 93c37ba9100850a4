#include "vcpufold/agent/agent_config.h"

#include "vcpufold/common/daemon_support.h"
#include "vcpufold/common/toml_text.h"

#include <algorithm>
#include <set>
#include <vector>

namespace vcpufold::agent {
namespace {

constexpr std::pair<const char*, ActuatorChoice> kActuatorChoices[] = {
    {"auto", ActuatorChoice::Auto}, {"kernel", ActuatorChoice::Kernel},
    {"cpuset", ActuatorChoice::Cpuset}, {"none", ActuatorChoice::None}};

const std::set<std::string> kKnownKeys = {
    "agent.interval_ms", "agent.sample_ms",          "agent.port",          "agent.port_name",
    "agent.actuator",    "agent.log_level",          "fallback.enabled",    "fallback.high_threshold",
    "fallback.low_threshold", "cpuset.move_root_tasks"};

// Reads typed values out of a parsed table, collecting every problem.
class Reader {
 public:
  Reader(const toml::table& table, std::vector<std::string>& problems) : table_(table), problems_(problems) {}

  template <typename T>
  void read(const char* key, T& target) {
    const auto node = table_.at_path(key);
    if (!node) return;
    if constexpr (std::is_same_v<T, std::uint32_t>) {
      // Only an integer node is read as one: toml++ would convert a float,
      // and 25e20 does not fit (undefined behaviour, found by fuzzing).
      const auto value = node.is_integer() ? node.value<std::int64_t>() : std::nullopt;
      if (!value || *value < 0 || *value > UINT32_MAX)
        problems_.push_back(std::string(key) + ": expected a non-negative integer");
      else
        target = static_cast<std::uint32_t>(*value);
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!node.is_boolean())
        problems_.push_back(std::string(key) + ": expected true or false");
      else
        target = *node.value<bool>();
    } else {
      if (!node.is_string())
        problems_.push_back(std::string(key) + ": expected a string");
      else
        target = *node.value<std::string>();
    }
  }

 private:
  const toml::table& table_;
  std::vector<std::string>& problems_;
};

void collectKeys(const toml::table& table, const std::string& prefix, std::vector<std::string>& unknown) {
  for (const auto& [key, node] : table) {
    const std::string path = prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
    if (const auto* sub = node.as_table(); sub && prefix.empty()) {
      collectKeys(*sub, path, unknown);
    } else if (!kKnownKeys.count(path)) {
      unknown.push_back(path + ": unknown key");
    }
  }
}


}  // namespace

const char* actuatorChoiceName(ActuatorChoice choice) {
  for (const auto& [name, value] : kActuatorChoices)
    if (value == choice) return name;
  return "?";
}

Expected<AgentConfig> parseAgentConfig(std::string_view text, const std::string& source) {
  auto parsed = parseTomlText(text, source);
  if (!parsed) return parsed.error();
  const toml::table& table = *parsed;
  AgentConfig config;
  std::vector<std::string> problems;
  collectKeys(table, "", problems);
  Reader reader(table, problems);
  reader.read("agent.interval_ms", config.intervalMs);
  reader.read("agent.sample_ms", config.sampleMs);
  // Unset, sampling follows a short interval down rather than refusing it.
  if (!table.at_path("agent.sample_ms")) config.sampleMs = std::min(config.sampleMs, config.intervalMs);
  reader.read("agent.port", config.port);
  reader.read("agent.port_name", config.portName);
  std::string actuator = actuatorChoiceName(config.actuator);
  reader.read("agent.actuator", actuator);
  bool knownActuator = false;
  for (const auto& [name, value] : kActuatorChoices)
    if (actuator == name) {
      config.actuator = value;
      knownActuator = true;
    }
  if (!knownActuator) problems.push_back("agent.actuator: \"" + actuator + "\" is not one of auto, kernel, cpuset, none");
  reader.read("agent.log_level", config.logLevel);
  reader.read("fallback.enabled", config.fallbackEnabled);
  reader.read("fallback.high_threshold", config.highThresholdBp);
  reader.read("fallback.low_threshold", config.lowThresholdBp);
  reader.read("cpuset.move_root_tasks", config.moveRootTasks);
  if (auto valid = validateAgentConfig(config); !valid) problems.push_back(valid.error().message);
  if (!problems.empty()) return Error{source + ":\n" + joinLines(problems)};
  return config;
}

Expected<void> validateAgentConfig(const AgentConfig& config) {
  std::vector<std::string> problems;
  auto range = [&problems](const char* key, std::uint32_t value, std::uint32_t min, std::uint32_t max) {
    if (value < min || value > max)
      problems.push_back(std::string(key) + ": " + std::to_string(value) + " is out of range " +
                         std::to_string(min) + ".." + std::to_string(max));
  };
  range("agent.interval_ms", config.intervalMs, 100, 100000);
  range("agent.sample_ms", config.sampleMs, 10, config.intervalMs);
  range("fallback.high_threshold", config.highThresholdBp, 1, 9999);
  if (config.lowThresholdBp >= config.highThresholdBp)
    problems.push_back("fallback.low_threshold: " + std::to_string(config.lowThresholdBp) +
                       " must be below fallback.high_threshold (" + std::to_string(config.highThresholdBp) + ")");
  if (config.portName.empty() || config.portName.size() > 64) problems.push_back("agent.port_name: 1..64 characters");
  static const std::set<std::string> kLevels = {"trace", "debug", "info", "warn", "error"};
  if (!kLevels.count(config.logLevel))
    problems.push_back("agent.log_level: \"" + config.logLevel + "\" is not one of trace, debug, info, warn, error");
  if (!problems.empty()) return Error{joinLines(problems)};
  return {};
}

}  // namespace vcpufold::agent
