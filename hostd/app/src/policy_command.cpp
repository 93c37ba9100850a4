// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/policy_command.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "vcpufold/common/config_file.h"
#include "vcpufold/common/log_text.h"
#include "vcpufold/common/system_paths.h"
#include "vcpufold/hostd/domain_xml.h"
#include "vcpufold/hostd/fleet_rule.h"
#include "vcpufold/hostd/hostd_config.h"
#include "vcpufold/hostd/policy_xml.h"

namespace vcpufold::hostd {
namespace {

constexpr const char* kKeys[] = {"mode", "vcpus", "min-vcpus", "max-vcpus", "weight"};

std::map<std::string, std::string> attributesOf(const FoldPolicy& policy) {
  std::map<std::string, std::string> attributes{{"mode", foldModeName(policy.mode)}};
  if (policy.fixedVcpus) attributes["vcpus"] = std::to_string(*policy.fixedVcpus);
  if (policy.minVcpus != 1) attributes["min-vcpus"] = std::to_string(policy.minVcpus);
  if (policy.maxVcpus) attributes["max-vcpus"] = std::to_string(*policy.maxVcpus);
  if (policy.weight) attributes["weight"] = std::to_string(*policy.weight);
  return attributes;
}

std::string xmlEscaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// mode=auto min-vcpus=2 weight=200: the policy as an operator types it.
std::string describe(const FoldPolicy& policy) {
  std::string text;
  const auto attributes = attributesOf(policy);
  for (const char* key : kKeys)
    if (const auto found = attributes.find(key); found != attributes.end())
      text += (text.empty() ? "" : " ") + found->first + "=" + found->second;
  if (!policy.weight) text += " (weight: the VM's cgroup)";
  return text;
}

// hostd's configuration (its libvirt URI and fleet rules), else the defaults
// and a warning: the command works without a readable hostd.toml.
HostdConfig configOf(const HostdOptions& options) {
  const std::string path = options.configPath.empty() ? paths::kHostdConfig : options.configPath;
  auto config = loadConfigFile(options.root, path, options.configExplicit, parseHostdConfig);
  if (config) return *config;
  std::fprintf(stderr, "vcpufold-hostd policy: %s; going on without its fleet rules\n", config.error().message.c_str());
  return HostdConfig{};
}

// The fleet rule hostd would give a VM without policy metadata, if one matches.
std::optional<std::pair<std::string, FoldPolicy>> ruleFor(PolicyStore& store, const std::string& vm,
                                                          const HostdConfig& config) {
  if (config.rules.empty()) return std::nullopt;
  std::vector<VmRecord> records(1);
  records[0].name = vm;
  if (auto xml = store.domainXml(vm)) {
    const DomainFacts facts = readDomainFacts(*xml);
    records[0].novaFlavor = facts.novaFlavor;
    records[0].partition = facts.partition;
  }
  applyFleetRules(config.rules, records);
  if (records[0].policySource != PolicySource::Rule) return std::nullopt;
  return std::make_pair(records[0].policyRule, records[0].policy);
}

// What a scope holds, and what hostd makes of it.
struct ScopePolicy {
  std::optional<std::string> xml;
  FoldPolicy policy;                 // the default when there is none or it is refused
  std::optional<std::string> error;  // the metadata is there and refused
};

Expected<ScopePolicy> readScope(PolicyStore& store, const std::string& vm, PolicyScope scope) {
  auto xml = store.read(vm, scope);
  if (!xml) return xml.error();
  ScopePolicy out{*xml, FoldPolicy{}, std::nullopt};
  if (*xml) {
    if (auto parsed = parsePolicyXml(**xml))
      out.policy = *parsed;
    else
      out.error = parsed.error().message;
  }
  return out;
}

// Metadata and names come from VM owners: escaped like the log, so a
// terminal shows what they hold and acts on none of it.
std::string shown(const std::string& text) { return escapeForLog(text, 4096); }

void printScope(const char* name, const ScopePolicy& scope) {
  if (!scope.xml)
    std::printf("  %-7s no policy metadata: the default (%s)\n", name, describe(FoldPolicy{}).c_str());
  else if (scope.error)
    std::printf("  %-7s %s\n          refused: %s\n", name, shown(*scope.xml).c_str(), shown(*scope.error).c_str());
  else
    std::printf("  %-7s %s\n", name, shown(*scope.xml).c_str());
}

int show(PolicyStore& store, const PolicyRequest& request, const PolicyStore::DomainState& state,
         const HostdConfig& hostdConfig) {
  std::printf("%s: %s, %s, on %s\n", shown(request.vm).c_str(), state.running ? "running" : "shut off",
              state.persistent ? "persistent" : "transient", store.uri().c_str());
  std::optional<ScopePolicy> live, config;
  if (state.running) {
    auto read = readScope(store, request.vm, PolicyScope::Live);
    if (!read) return std::fprintf(stderr, "vcpufold-hostd policy: %s\n", shown(read.error().message).c_str()), 1;
    live = *read;
    printScope("live:", *live);
  }
  if (state.persistent) {
    auto read = readScope(store, request.vm, PolicyScope::Config);
    if (!read) return std::fprintf(stderr, "vcpufold-hostd policy: %s\n", shown(read.error().message).c_str()), 1;
    config = *read;
    printScope("config:", *config);
  }
  // hostd reads a running VM's live metadata; a refused element leaves in
  // force the last valid one hostd saw (the default if it saw none).
  const ScopePolicy& inForce = live ? *live : *config;
  const char* from = live ? "the live metadata" : "the persistent definition, when the VM starts";
  if (!inForce.xml) {
    if (const auto rule = ruleFor(store, request.vm, hostdConfig))
      std::printf("in force: %s (no policy metadata: from %s in hostd.toml)\n", describe(rule->second).c_str(),
                  rule->first.c_str());
    else
      std::printf("in force: %s (default: no policy metadata, no fleet rule matches)\n",
                  describe(inForce.policy).c_str());
  }
  if (inForce.xml && inForce.error)
    std::printf("in force: the last valid policy hostd read (the %s element is refused)\n", live ? "live" : "config");
  else if (inForce.xml)
    std::printf("in force: %s (from %s)\n", describe(inForce.policy).c_str(), from);
  return 0;
}

nlohmann::json policyJson(const FoldPolicy& policy) {
  const auto optional = [](const std::optional<std::uint32_t>& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  };
  return {{"mode", foldModeName(policy.mode)},
          {"vcpus", optional(policy.fixedVcpus)},
          {"min_vcpus", policy.minVcpus},
          {"max_vcpus", optional(policy.maxVcpus)},
          {"weight", optional(policy.weight)}};
}

nlohmann::json scopeJson(const std::optional<ScopePolicy>& scope) {
  if (!scope) return nullptr;  // the VM has no such definition
  if (!scope->xml) return {{"metadata", nullptr}, {"policy", policyJson(FoldPolicy{})}, {"refused", nullptr}};
  return {{"metadata", *scope->xml},
          {"policy", scope->error ? nlohmann::json(nullptr) : policyJson(scope->policy)},
          {"refused", scope->error ? nlohmann::json(*scope->error) : nlohmann::json(nullptr)}};
}

// show --json: the same reading as show, as one object for scripts.
int showJson(PolicyStore& store, const PolicyRequest& request, const PolicyStore::DomainState& state,
             const HostdConfig& hostdConfig) {
  std::optional<ScopePolicy> live, config;
  for (const auto& [wanted, scope, target] :
       {std::tuple{state.running, PolicyScope::Live, &live}, std::tuple{state.persistent, PolicyScope::Config, &config}}) {
    if (!wanted) continue;
    auto read = readScope(store, request.vm, scope);
    if (!read) return std::fprintf(stderr, "vcpufold-hostd policy: %s\n", shown(read.error().message).c_str()), 1;
    *target = *read;
  }
  const ScopePolicy& inForce = live ? *live : *config;
  nlohmann::json force;
  if (!inForce.xml) {
    if (const auto rule = ruleFor(store, request.vm, hostdConfig))
      force = {{"policy", policyJson(rule->second)}, {"from", rule->first}};
    else
      force = {{"policy", policyJson(inForce.policy)}, {"from", "default"}};
  } else if (inForce.error) {
    force = {{"policy", nullptr}, {"from", "the last valid policy hostd read"}};
  } else {
    force = {{"policy", policyJson(inForce.policy)}, {"from", live ? "live metadata" : "persistent definition"}};
  }
  const nlohmann::json out = {{"vm", request.vm},         {"running", state.running}, {"persistent", state.persistent},
                              {"uri", store.uri()},       {"live", scopeJson(live)},  {"config", scopeJson(config)},
                              {"in_force", force}};
  // dump() escapes control characters: names and metadata come from VM owners.
  std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  return 0;
}

}  // namespace

Expected<FoldPolicy> applyPolicyAssignments(const FoldPolicy& current, const std::vector<std::string>& assignments) {
  if (assignments.empty())
    return Error{"set needs at least one KEY=VALUE (keys: mode, vcpus, min-vcpus, max-vcpus, weight)"};
  std::map<std::string, std::string> attributes = attributesOf(current);
  for (const std::string& assignment : assignments) {
    const auto equals = assignment.find('=');
    if (equals == std::string::npos || equals == 0)
      return Error{"\"" + assignment + "\" is not KEY=VALUE (keys: mode, vcpus, min-vcpus, max-vcpus, weight)"};
    const std::string key = assignment.substr(0, equals);
    const std::string value = assignment.substr(equals + 1);
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys))
      return Error{"unknown key \"" + key + "\" (keys: mode, vcpus, min-vcpus, max-vcpus, weight)"};
    if (value.empty())
      attributes.erase(key);
    else
      attributes[key] = value;
  }
  // A mode other than fixed takes no size: fixed's vcpus goes with it.
  if (attributes.count("mode") && attributes["mode"] != "fixed" &&
      !std::any_of(assignments.begin(), assignments.end(),
                   [](const std::string& a) { return a.rfind("vcpus=", 0) == 0; }))
    attributes.erase("vcpus");
  std::string xml = std::string("<policy xmlns=\"") + kPolicyNamespace + "\"";
  for (const auto& [key, value] : attributes) xml += " " + key + "=\"" + xmlEscaped(value) + "\"";
  xml += "/>";
  return parsePolicyXml(xml);
}

Expected<std::vector<PolicyScope>> policyScopesFor(const PolicyRequest& request,
                                                   const PolicyStore::DomainState& state) {
  if (request.live && !state.running)
    return Error{request.vm +
                 " is not running: --live does not apply (use --config; hostd reads it when the VM starts)"};
  if (request.config && !state.persistent)
    return Error{request.vm +
                 " is transient (started without a persistent definition): it has no configuration to keep a "
                 "policy in, so --config does not apply; use --live"};
  std::vector<PolicyScope> scopes;
  if (request.live || (!request.config && state.running)) scopes.push_back(PolicyScope::Live);
  if (request.config || (!request.live && state.persistent)) scopes.push_back(PolicyScope::Config);
  return scopes;
}

int runPolicyCommand(const HostdOptions& options, const PolicyRequest& request) {
  const auto fail = [](const std::string& message) {
    std::fprintf(stderr, "vcpufold-hostd policy: %s\n", shown(message).c_str());
    return 1;
  };
  const HostdConfig config = configOf(options);
  auto store = PolicyStore::open(options.connectUri.value_or(config.libvirtUri));
  if (!store) return fail(store.error().message);
  auto state = store->state(request.vm);
  if (!state) return fail(state.error().message);
  if (request.action == PolicyRequest::Action::Show)
    return request.json ? showJson(*store, request, *state, config) : show(*store, request, *state, config);

  auto scopes = policyScopesFor(request, *state);
  if (!scopes) return fail(scopes.error().message);
  // Every scope's new element is computed and checked before anything is written.
  std::vector<std::pair<PolicyScope, std::optional<std::string>>> writes;
  for (const PolicyScope scope : *scopes) {
    if (request.action == PolicyRequest::Action::Clear) {
      writes.emplace_back(scope, std::nullopt);
      continue;
    }
    auto current = readScope(*store, request.vm, scope);
    if (!current) return fail(current.error().message);
    if (current->error)
      std::fprintf(stderr, "vcpufold-hostd policy: the %s element is refused (%s); starting from the default\n",
                   policyScopeName(scope), shown(*current->error).c_str());
    auto policy = applyPolicyAssignments(current->policy, request.assignments);
    if (!policy) return fail(policy.error().message + "; nothing changed");
    writes.emplace_back(scope, formatPolicyXml(*policy));
  }
  for (const auto& [scope, xml] : writes) {
    if (auto written = store->write(request.vm, xml, scope); !written) return fail(written.error().message);
    auto back = readScope(*store, request.vm, scope);
    if (!back) return fail(back.error().message);
    if (back->xml)
      std::printf("%s %s: %s\n", shown(request.vm).c_str(), policyScopeName(scope), shown(*back->xml).c_str());
    else
      std::printf("%s %s: no policy metadata: the default (%s)\n", shown(request.vm).c_str(), policyScopeName(scope),
                  describe(FoldPolicy{}).c_str());
  }
  return 0;
}

}  // namespace vcpufold::hostd
