// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/agent_config.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <vector>

#include "vcpufold/common/daemon_support.h"
#include "vcpufold/common/toml_reader.h"
#include "vcpufold/common/toml_text.h"

namespace vcpufold::agent {
namespace {

constexpr std::pair<const char*, ActuatorChoice> kActuatorChoices[] = {{"auto", ActuatorChoice::Auto},
                                                                       {"kernel", ActuatorChoice::Kernel},
                                                                       {"cpuset", ActuatorChoice::Cpuset},
                                                                       {"none", ActuatorChoice::None}};

const std::set<std::string> kKnownKeys = {"agent.interval_ms",
                                          "agent.sample_ms",
                                          "agent.port",
                                          "agent.port_name",
                                          "agent.actuator",
                                          "agent.fold",
                                          "agent.log_level",
                                          "agent.nice",
                                          "fallback.enabled",
                                          "fallback.high_threshold",
                                          "fallback.low_threshold",
                                          "cpuset.move_root_tasks",
                                          "cpuset.steer_housekeeping",
                                          "metrics.textfile"};

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
  TomlReader reader(table, problems);
  reader.rejectUnknownKeys(kKnownKeys);
  reader.unsignedInteger("agent.interval_ms", config.intervalMs);
  reader.unsignedInteger("agent.sample_ms", config.sampleMs);
  // Unset, sampling follows a short interval down rather than refusing it.
  if (!reader.has("agent.sample_ms")) config.sampleMs = std::min(config.sampleMs, config.intervalMs);
  reader.string("agent.port", config.port);
  reader.string("agent.port_name", config.portName);
  std::string actuator = actuatorChoiceName(config.actuator);
  reader.string("agent.actuator", actuator);
  bool knownActuator = false;
  for (const auto& [name, value] : kActuatorChoices)
    if (actuator == name) {
      config.actuator = value;
      knownActuator = true;
    }
  if (!knownActuator)
    problems.push_back("agent.actuator: \"" + actuator + "\" is not one of auto, kernel, cpuset, none");
  std::string fold = foldDefaultName(config.foldDefault);
  reader.string("agent.fold", fold);
  if (fold == foldDefaultName(FoldDefault::Always))
    config.foldDefault = FoldDefault::Always;
  else if (fold == foldDefaultName(FoldDefault::ByEvidence))
    config.foldDefault = FoldDefault::ByEvidence;
  else
    problems.push_back("agent.fold: \"" + fold + "\" is not one of by-evidence, always");
  reader.string("agent.log_level", config.logLevel);
  reader.signedInteger("agent.nice", config.nice, -20, 19);
  reader.boolean("fallback.enabled", config.fallbackEnabled);
  reader.unsignedInteger("fallback.high_threshold", config.highThresholdBp);
  reader.unsignedInteger("fallback.low_threshold", config.lowThresholdBp);
  reader.boolean("cpuset.move_root_tasks", config.moveRootTasks);
  reader.boolean("cpuset.steer_housekeeping", config.steerHousekeeping);
  reader.string("metrics.textfile", config.metricsTextfile);
  if (auto valid = validateAgentConfig(config); !valid) problems.push_back(valid.error().message);
  if (!problems.empty()) return Error{source + ":\n" + joinLines(problems)};
  return config;
}

Expected<void> validateAgentConfig(const AgentConfig& config) {
  std::vector<std::string> problems;
  auto range = [&problems](const char* key, std::uint32_t value, std::uint32_t min, std::uint32_t max) {
    if (value < min || value > max)
      problems.push_back(std::string(key) + ": " + std::to_string(value) + " is out of range " + std::to_string(min) +
                         ".." + std::to_string(max));
  };
  range("agent.interval_ms", config.intervalMs, 100, 100000);
  range("agent.sample_ms", config.sampleMs, 10, config.intervalMs);
  range("fallback.high_threshold", config.highThresholdBp, 1, 9999);
  if (config.lowThresholdBp >= config.highThresholdBp)
    problems.push_back("fallback.low_threshold: " + std::to_string(config.lowThresholdBp) +
                       " must be below fallback.high_threshold (" + std::to_string(config.highThresholdBp) + ")");
  if (config.portName.empty() || config.portName.size() > 64) problems.push_back("agent.port_name: 1..64 characters");
  if (const auto& textfile = config.metricsTextfile; !textfile.empty()) {
    const std::filesystem::path path(textfile);
    // node_exporter reads only *.prom files of its directory; the agent's
    // temporary (NAME.prom.tmp) is therefore never read half-written.
    if (!path.is_absolute() || path.filename().string().size() <= 5 || path.extension() != ".prom" ||
        textfile.find("/../") != std::string::npos || textfile.find("/./") != std::string::npos)
      problems.push_back("metrics.textfile: \"" + textfile +
                         "\" must be an absolute path to a file whose name ends in .prom (node_exporter's "
                         "textfile directory reads only those)");
  }
  static const std::set<std::string> kLevels = {"trace", "debug", "info", "warn", "error"};
  if (!kLevels.count(config.logLevel))
    problems.push_back("agent.log_level: \"" + config.logLevel + "\" is not one of trace, debug, info, warn, error");
  if (!problems.empty()) return Error{joinLines(problems)};
  return {};
}

}  // namespace vcpufold::agent
