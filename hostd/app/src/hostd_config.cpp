// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/hostd_config.h"

#include <pwd.h>

#include <set>

#include "vcpufold/common/daemon_support.h"
#include "vcpufold/common/listen_address.h"
#include "vcpufold/common/system_paths.h"
#include "vcpufold/common/toml_reader.h"
#include "vcpufold/common/toml_text.h"

namespace vcpufold::hostd {
namespace {

const std::set<std::string> kKnownKeys = {"hostd.interval_ms",
                                          "hostd.reserve_cpus",
                                          "hostd.unfold_delay_ticks",
                                          "hostd.unfold_delay_ms",
                                          "hostd.unfold_margin_cpus",
                                          "hostd.ttl_ticks",
                                          "hostd.log_level",
                                          "hostd.missing_input_hold_ms",
                                          "inventory.backend",
                                          "inventory.libvirt_uri",
                                          "inventory.qmp_directory",
                                          "inventory.qmp_socket_owner",
                                          "inventory.pool_cgroup",
                                          "metrics.address",
                                          "control.socket"};
const std::set<std::string> kVmKeys = {"name",  "qmp_socket", "hint_socket", "mode",
                                       "vcpus", "min_vcpus",  "max_vcpus",   "weight"};
const std::set<std::string> kRuleKeys = {"name",  "nova_flavor", "partition", "mode",
                                         "vcpus", "min_vcpus",   "max_vcpus", "weight"};

// The policy keys of a [[vm]] or [[rule]] table, spelled as in hostd.toml.
void readPolicyKeys(TomlReader& reader, const std::string& prefix, FoldPolicy& policy,
                    std::vector<std::string>& problems) {
  std::string mode = "auto";
  reader.string("mode", mode);
  if (auto modeParsed = foldModeFromName(mode))
    policy.mode = *modeParsed;
  else
    problems.push_back(prefix + "mode: \"" + mode + "\" is not one of auto, off, fixed, guest");
  reader.optionalUnsigned("vcpus", policy.fixedVcpus);
  reader.unsignedInteger("min_vcpus", policy.minVcpus);
  reader.optionalUnsigned("max_vcpus", policy.maxVcpus);
  reader.optionalUnsigned("weight", policy.weight);
  if (auto valid = validatePolicy(policy, PolicySpelling::Toml); !valid)
    problems.push_back(prefix + "policy: " + valid.error().message);
}

// An array of tables, each read by `read` with its "key[i]." prefix.
template <typename Read>
void readTables(toml::table& table, const char* key, std::vector<std::string>& problems, Read read) {
  if (const auto* tables = table[key].as_array()) {
    for (std::size_t i = 0; i < tables->size(); ++i) {
      const std::string prefix = std::string(key) + "[" + std::to_string(i) + "].";
      if (const auto* entry = (*tables)[i].as_table())
        read(*entry, prefix);
      else
        problems.push_back(prefix.substr(0, prefix.size() - 1) + ": expected a table");
    }
  } else if (table.contains(key)) {
    problems.push_back(std::string(key) + ": expected [[" + key + "]] tables");
  }
}

}  // namespace

std::optional<uid_t> uidOfUser(const std::string& name) {
  // getpwnam_r: the configuration is also read on SIGHUP, with other threads running.
  passwd entry{};
  passwd* found = nullptr;
  std::vector<char> buffer(16384);
  if (::getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || !found) return std::nullopt;
  return found->pw_uid;
}

const char* inventoryKindName(InventoryKind kind) { return kind == InventoryKind::Libvirt ? "libvirt" : "qmp"; }

Expected<HostdConfig> parseHostdConfig(std::string_view text, const std::string& source) {
  auto parsed = parseTomlText(text, source);
  if (!parsed) return parsed.error();
  toml::table& table = *parsed;
  HostdConfig config;
  std::vector<std::string> problems;
  TomlReader reader(table, problems);
  reader.rejectUnknownKeys(kKnownKeys, {"vm", "rule"});
  reader.unsignedInteger("hostd.interval_ms", config.intervalMs);
  reader.number("hostd.reserve_cpus", config.reserveCpus);
  // unfold_delay_ticks is the older spelling: ticks of the configured interval.
  std::uint32_t delayTicks = 0;
  reader.unsignedInteger("hostd.unfold_delay_ticks", delayTicks, 100);
  reader.unsignedInteger("hostd.unfold_delay_ms", config.unfoldDelayMs);
  if (reader.has("hostd.unfold_delay_ticks")) {
    if (reader.has("hostd.unfold_delay_ms"))
      problems.push_back("hostd.unfold_delay_ticks: give unfold_delay_ms only (unfold_delay_ticks is its older form)");
    else
      config.unfoldDelayMs = delayTicks * config.intervalMs;
  }
  reader.number("hostd.unfold_margin_cpus", config.unfoldMarginCpus);
  reader.unsignedInteger("hostd.ttl_ticks", config.ttlTicks);
  reader.unsignedInteger("hostd.missing_input_hold_ms", config.missingInputHoldMs);
  reader.string("hostd.log_level", config.logLevel);
  std::string backend = inventoryKindName(config.inventory);
  reader.string("inventory.backend", backend);
  if (backend == "libvirt")
    config.inventory = InventoryKind::Libvirt;
  else if (backend == "qmp")
    config.inventory = InventoryKind::Qmp;
  else
    problems.push_back("inventory.backend: \"" + backend + "\" is not libvirt or qmp");
  reader.string("inventory.libvirt_uri", config.libvirtUri);
  reader.string("inventory.qmp_directory", config.qmpDirectory);
  reader.string("inventory.qmp_socket_owner", config.qmpSocketOwner);
  reader.string("inventory.pool_cgroup", config.poolCgroup);
  reader.string("metrics.address", config.metricsAddress);
  reader.string("control.socket", config.controlSocket);

  readTables(table, "vm", problems, [&](const toml::table& vmTable, const std::string& prefix) {
    QmpVmConfig vm;
    TomlReader vmReader(vmTable, problems, prefix);
    vmReader.rejectUnknownKeys(kVmKeys);
    vmReader.string("name", vm.name);
    vmReader.string("qmp_socket", vm.qmpSocket);
    vmReader.string("hint_socket", vm.hintSocket);
    readPolicyKeys(vmReader, prefix, vm.policy, problems);
    if (vm.name.empty()) problems.push_back(prefix + "name: required");
    if (vm.qmpSocket.empty()) problems.push_back(prefix + "qmp_socket: required");
    if (vm.hintSocket.empty()) problems.push_back(prefix + "hint_socket: required");
    config.qmpVms.push_back(vm);
  });
  readTables(table, "rule", problems, [&](const toml::table& ruleTable, const std::string& prefix) {
    FleetRule rule;
    TomlReader ruleReader(ruleTable, problems, prefix);
    ruleReader.rejectUnknownKeys(kRuleKeys);
    const auto glob = [&](const char* key, std::optional<std::string>& target) {
      if (!ruleReader.has(key)) return;
      std::string value;
      ruleReader.string(key, value);
      if (value.empty())
        problems.push_back(prefix + key + ": an empty pattern matches nothing; leave the key out instead");
      else
        target = value;
    };
    glob("name", rule.name);
    glob("nova_flavor", rule.novaFlavor);
    glob("partition", rule.partition);
    if (!ruleReader.has("name") && !ruleReader.has("nova_flavor") && !ruleReader.has("partition"))
      problems.push_back(prefix + "needs name, nova_flavor or partition (a rule for every VM is the default's job)");
    readPolicyKeys(ruleReader, prefix, rule.policy, problems);
    config.rules.push_back(rule);
  });
  if (auto valid = validateHostdConfig(config); !valid) problems.push_back(valid.error().message);
  if (!problems.empty()) return Error{source + ":\n" + joinLines(problems)};
  return config;
}

Expected<void> validateHostdConfig(const HostdConfig& config) {
  std::vector<std::string> problems;
  if (config.intervalMs < 100 || config.intervalMs > 60000)
    problems.push_back("hostd.interval_ms: " + std::to_string(config.intervalMs) + " is out of range 100..60000");
  if (!(config.reserveCpus >= 0 && config.reserveCpus <= 4096))
    problems.push_back("hostd.reserve_cpus: must be 0..4096");
  if (config.unfoldDelayMs > 600000)
    problems.push_back("hostd.unfold_delay_ms: " + std::to_string(config.unfoldDelayMs) + " is out of range 0..600000");
  if (!(config.unfoldMarginCpus >= 0 && config.unfoldMarginCpus <= 4))
    problems.push_back("hostd.unfold_margin_cpus: out of range 0..4");
  if (config.ttlTicks < 2 || config.ttlTicks > 100)
    problems.push_back("hostd.ttl_ticks: " + std::to_string(config.ttlTicks) + " is out of range 2..100");
  else if (static_cast<std::uint64_t>(config.ttlTicks) * config.intervalMs > 600000)
    problems.push_back("hostd.ttl_ticks: a lease of ttl_ticks x interval_ms must stay within 600000 ms");
  if (config.missingInputHoldMs > 600000)
    problems.push_back("hostd.missing_input_hold_ms: " + std::to_string(config.missingInputHoldMs) +
                       " is out of range 0..600000");
  // Socket paths must fit sockaddr_un (107 bytes and the terminating NUL).
  const auto checkSocket = [&problems](const std::string& key, const std::string& path) {
    if (path.size() > paths::kMaxSocketPath)
      problems.push_back(key + ": the path is " + std::to_string(path.size()) + " bytes; a UNIX socket path may have " +
                         std::to_string(paths::kMaxSocketPath));
  };
  checkSocket("control.socket", config.controlSocket);
  if (!config.metricsAddress.empty())
    if (auto address = parseListenAddress(config.metricsAddress, "metrics.address"); !address)
      problems.push_back(address.error().message);
  for (std::size_t i = 0; i < config.qmpVms.size(); ++i) {
    checkSocket("vm[" + std::to_string(i) + "].qmp_socket", config.qmpVms[i].qmpSocket);
    checkSocket("vm[" + std::to_string(i) + "].hint_socket", config.qmpVms[i].hintSocket);
  }
  static const std::set<std::string> kLevels = {"trace", "debug", "info", "warn", "error"};
  if (!kLevels.count(config.logLevel))
    problems.push_back("hostd.log_level: \"" + config.logLevel + "\" is not a level");
  if (!config.qmpSocketOwner.empty() && !uidOfUser(config.qmpSocketOwner))
    problems.push_back("inventory.qmp_socket_owner: no user \"" + config.qmpSocketOwner + "\" on this host");
  if (!config.poolCgroup.empty() &&
      (config.poolCgroup.front() == '/' || config.poolCgroup.find("..") != std::string::npos ||
       config.poolCgroup.find_first_of("\n\0", 0, 2) != std::string::npos))
    problems.push_back("inventory.pool_cgroup: \"" + config.poolCgroup +
                       "\" must be a cgroup path relative to the cgroup root, without \"..\" (e.g. \"qemu.slice\")");
  if (config.inventory == InventoryKind::Qmp && config.qmpDirectory.empty() && config.qmpVms.empty())
    problems.push_back("inventory.backend qmp needs inventory.qmp_directory or [[vm]] tables");
  std::set<std::string> names;
  for (const auto& vm : config.qmpVms)
    if (!names.insert(vm.name).second) problems.push_back("vm: the name \"" + vm.name + "\" appears twice");
  if (!problems.empty()) return Error{joinLines(problems)};
  return {};
}

}  // namespace vcpufold::hostd
