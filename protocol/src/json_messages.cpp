// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/protocol/json_messages.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "vcpufold/protocol/cpulist.h"
#include "vcpufold/protocol/limits.h"

namespace vcpufold::protocol {
namespace {

using nlohmann::json;

// Reads the fields of one message object, each failure naming "type.field".
class FieldReader {
 public:
  FieldReader(const json& object, std::string type) : object_(object), type_(std::move(type)) {}

  [[nodiscard]] bool has(const char* name) const { return object_.contains(name); }

  std::uint64_t unsignedInt(const char* name, std::uint64_t min, std::uint64_t max) const {
    return checkedUnsigned(name, required(name), min, max);
  }

  std::optional<std::uint64_t> optionalUnsignedInt(const char* name, std::uint64_t min,
                                                   std::uint64_t max) const {
    if (!has(name)) return std::nullopt;
    return checkedUnsigned(name, object_.at(name), min, max);
  }

  double number(const char* name, double min, double max) const {
    const json& value = required(name);
    if (!value.is_number()) fail(name, "expected a number");
    const double number = value.get<double>();
    if (!(number >= min && number <= max))
      fail(name, value.dump() + " is out of range " + format(min) + ".." + format(max));
    return number;
  }

  // Bytes of UTF-8 (the parser has checked it), no control characters.
  std::string string(const char* name, std::size_t minBytes, std::size_t maxBytes) const {
    const json& value = required(name);
    if (!value.is_string()) fail(name, "expected a string");
    const auto& text = value.get_ref<const std::string&>();
    if (text.size() < minBytes || text.size() > maxBytes)
      fail(name, "length " + std::to_string(text.size()) + " is out of range " +
                     std::to_string(minBytes) + ".." + std::to_string(maxBytes) + " bytes");
    for (char c : text)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) fail(name, "control character in string");
    return text;
  }

  std::optional<bool> optionalBoolean(const char* name) const {
    if (!has(name)) return std::nullopt;
    const json& value = object_.at(name);
    if (!value.is_boolean()) fail(name, "expected true or false");
    return value.get<bool>();
  }

  // A name for logs and metric labels: lower-case letters, digits, '.' and '-'.
  std::optional<std::string> optionalToken(const char* name, std::size_t maxBytes) const {
    if (!has(name)) return std::nullopt;
    std::string text = string(name, 1, maxBytes);
    for (char c : text)
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-'))
        fail(name, "only a-z, 0-9, '.' and '-' are allowed");
    return text;
  }

  CpuSet cpuList(const char* name, bool allowEmpty) const {
    const std::string text = string(name, 0, kMaxFrameBytes);
    auto cpus = parseCpuList(text);
    if (!cpus) fail(name, cpus.error().message);
    if (!allowEmpty && cpus->empty()) fail(name, "must not be empty");
    return *cpus;
  }

  template <typename Enum, std::size_t N>
  Enum enumeration(const char* name, const std::pair<const char*, Enum> (&table)[N]) const {
    const json& value = required(name);
    return enumValue(name, value, table);
  }

  template <typename Enum, std::size_t N>
  std::vector<Enum> enumArray(const char* name, const std::pair<const char*, Enum> (&table)[N]) const {
    const json& value = required(name);
    if (!value.is_array()) fail(name, "expected an array");
    if (value.size() > N) fail(name, "more than " + std::to_string(N) + " entries");
    std::vector<Enum> result;
    for (const json& item : value) {
      Enum entry = enumValue(name, item, table);
      for (Enum seen : result)
        if (seen == entry) fail(name, "duplicate entry " + item.dump());
      result.push_back(entry);
    }
    return result;
  }

  std::vector<std::uint32_t> unsignedArray(const char* name, std::size_t minCount, std::size_t maxCount,
                                           std::uint64_t min, std::uint64_t max) const {
    const json& value = required(name);
    if (!value.is_array()) fail(name, "expected an array");
    if (value.size() < minCount || value.size() > maxCount)
      fail(name, std::to_string(value.size()) + " entries, expected " + std::to_string(minCount) + ".." +
                     std::to_string(maxCount));
    std::vector<std::uint32_t> result;
    for (const json& item : value)
      result.push_back(static_cast<std::uint32_t>(checkedUnsigned(name, item, min, max)));
    return result;
  }

  [[noreturn]] void fail(const char* name, const std::string& reason) const {
    throw FieldError(type_ + "." + name, reason);
  }

 private:
  const json& required(const char* name) const {
    auto it = object_.find(name);
    if (it == object_.end()) fail(name, "missing");
    return *it;
  }

  std::uint64_t checkedUnsigned(const char* name, const json& value, std::uint64_t min,
                                std::uint64_t max) const {
    // Floats (4.0, 1e3) and negatives are refused: counts are exact integers.
    if (!value.is_number_unsigned()) {
      if (value.is_number_integer()) fail(name, value.dump() + " is out of range " + range(min, max));
      fail(name, "expected an unsigned integer, got " + std::string(value.type_name()));
    }
    const auto number = value.get<std::uint64_t>();
    if (number < min || number > max) fail(name, value.dump() + " is out of range " + range(min, max));
    return number;
  }

  template <typename Enum, std::size_t N>
  Enum enumValue(const char* name, const json& value, const std::pair<const char*, Enum> (&table)[N]) const {
    if (!value.is_string()) fail(name, "expected a string");
    const auto& text = value.get_ref<const std::string&>();
    std::string allowed;
    for (const auto& [wire, entry] : table) {
      if (text == wire) return entry;
      allowed += std::string(allowed.empty() ? "" : ", ") + wire;
    }
    fail(name, "unknown value " + value.dump() + " (expected one of " + allowed + ")");
  }

  static std::string range(std::uint64_t min, std::uint64_t max) {
    return std::to_string(min) + ".." + std::to_string(max);
  }
  static std::string format(double value) { return json(value).dump(); }

  const json& object_;
  std::string type_;
};

constexpr std::pair<const char*, Role> kRoles[] = {{"host", Role::Host}, {"agent", Role::Agent}};
constexpr std::pair<const char*, Actuator> kActuators[] = {
    {"kernel", Actuator::Kernel}, {"cpuset", Actuator::Cpuset}, {"none", Actuator::None}};
constexpr std::pair<const char*, HintPolicy> kPolicies[] = {
    {"auto", HintPolicy::Auto}, {"off", HintPolicy::Off}, {"fixed", HintPolicy::Fixed}};
constexpr std::pair<const char*, Control> kControls[] = {
    {"host", Control::Host}, {"fallback", Control::Fallback}, {"none", Control::None}};

template <typename Enum, std::size_t N>
const char* nameOf(Enum value, const std::pair<const char*, Enum> (&table)[N]) {
  for (const auto& [wire, entry] : table)
    if (entry == value) return wire;
  return "?";
}

constexpr std::size_t kMaxSoftwareBytes = 64;
constexpr std::size_t kMaxReasonBytes = 256;
constexpr std::uint32_t kMaxVcpus = static_cast<std::uint32_t>(kMaxCpus);

}  // namespace

const char* roleName(Role role) { return nameOf(role, kRoles); }
const char* actuatorName(Actuator actuator) { return nameOf(actuator, kActuators); }
const char* hintPolicyName(HintPolicy policy) { return nameOf(policy, kPolicies); }
const char* controlName(Control control) { return nameOf(control, kControls); }

std::optional<Actuator> actuatorFromName(std::string_view name) {
  for (const auto& [wire, entry] : kActuators)
    if (name == wire) return entry;
  return std::nullopt;
}

void to_json(json& out, const Hello& message) {
  out["role"] = roleName(message.role);
  out["versions"] = message.versions;
  out["software"] = message.software;
  if (message.agent) {
    const AgentInfo& agent = *message.agent;
    out["online"] = formatCpuList(agent.online);
    out["threads_per_core"] = agent.threadsPerCore;
    out["numa_nodes"] = agent.numaNodes;
    json actuators = json::array();
    for (Actuator actuator : agent.actuators) actuators.push_back(actuatorName(actuator));
    out["actuators"] = std::move(actuators);
    out["preferred"] = formatCpuList(agent.preferred);
    if (agent.kernelClass) out["kernel_class"] = *agent.kernelClass;
    if (!agent.foldsOnAutoHints) out["auto_fold"] = false;
  }
}

void from_json(const json& in, Hello& message) {
  const FieldReader fields(in, "hello");
  message.role = fields.enumeration("role", kRoles);
  message.versions = fields.unsignedArray("versions", 1, 16, 1, 65535);
  message.software = fields.string("software", 1, kMaxSoftwareBytes);
  message.agent.reset();
  if (message.role == Role::Agent) {
    AgentInfo agent;
    agent.online = fields.cpuList("online", false);
    agent.threadsPerCore = static_cast<std::uint32_t>(fields.unsignedInt("threads_per_core", 1, 8));
    agent.numaNodes = static_cast<std::uint32_t>(fields.unsignedInt("numa_nodes", 1, 1024));
    agent.actuators = fields.enumArray("actuators", kActuators);
    agent.preferred = fields.cpuList("preferred", false);
    if (!agent.preferred.isSubsetOf(agent.online)) fields.fail("preferred", "not within online");
    agent.kernelClass = fields.optionalToken("kernel_class", 32);
    agent.foldsOnAutoHints = fields.optionalBoolean("auto_fold").value_or(true);
    message.agent = std::move(agent);
  }
}

void to_json(json& out, const Hint& message) {
  out["seq"] = message.seq;
  out["vcpus"] = message.vcpus;
  out["ttl_ms"] = message.ttlMs;
  out["policy"] = hintPolicyName(message.policy);
  out["reason"] = message.reason;
}

void from_json(const json& in, Hint& message) {
  const FieldReader fields(in, "hint");
  message.seq = fields.unsignedInt("seq", 1, kMaxSeq);
  message.vcpus = static_cast<std::uint32_t>(fields.unsignedInt("vcpus", 1, kMaxVcpus));
  message.ttlMs = static_cast<std::uint32_t>(fields.unsignedInt("ttl_ms", 100, 600000));
  message.policy = fields.enumeration("policy", kPolicies);
  message.reason = fields.string("reason", 1, kMaxReasonBytes);
}

void to_json(json& out, const Ack& message) {
  out["seq"] = message.seq;
  out["applied"] = formatCpuList(message.applied);
  out["actuator"] = actuatorName(message.actuator);
}

void from_json(const json& in, Ack& message) {
  const FieldReader fields(in, "ack");
  message.seq = fields.unsignedInt("seq", 1, kMaxSeq);
  message.applied = fields.cpuList("applied", false);
  message.actuator = fields.enumeration("actuator", kActuators);
}

void to_json(json& out, const Status& message) {
  out["demand"] = message.demand;
  out["steal_bp"] = message.stealBp;
  out["interval_ms"] = message.intervalMs;
  out["preferred"] = formatCpuList(message.preferred);
  out["control"] = controlName(message.control);
}

void from_json(const json& in, Status& message) {
  const FieldReader fields(in, "status");
  message.demand = fields.number("demand", 0.0, 65536.0);
  message.stealBp = static_cast<std::uint32_t>(fields.unsignedInt("steal_bp", 0, 10000));
  message.intervalMs = static_cast<std::uint32_t>(fields.unsignedInt("interval_ms", 100, 100000));
  message.preferred = fields.cpuList("preferred", false);
  message.control = fields.enumeration("control", kControls);
}

void to_json(json& out, const ErrorMessage& message) {
  if (message.seq) out["seq"] = *message.seq;
  out["reason"] = message.reason;
}

void from_json(const json& in, ErrorMessage& message) {
  const FieldReader fields(in, "error");
  message.seq = fields.optionalUnsignedInt("seq", 1, kMaxSeq);
  message.reason = fields.string("reason", 1, kMaxReasonBytes);
}

}  // namespace vcpufold::protocol
