// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The messages of the vcpufold wire protocol, one plain struct each.
// docs/protocol.md is the specification: field meanings, units, ranges and
// the version each appeared in. Range checks live in the codec (codec.h).

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "vcpufold/protocol/cpu_set.h"

namespace vcpufold::protocol {

enum class Role { Host, Agent };
enum class Actuator { Kernel, Cpuset, None };
// The host's fold policy behind a hint (the VM's libvirt metadata mode).
enum class HintPolicy { Auto, Off, Fixed };
// Who decides the guest's preferred CPUs right now.
enum class Control { Host, Fallback, None };

// What the agent tells the host about its guest in hello (v1).
struct AgentInfo {
  CpuSet online;                      // online vCPUs
  std::uint32_t threadsPerCore = 1;   // SMT width of the guest topology
  std::uint32_t numaNodes = 1;        // guest NUMA nodes with CPUs
  std::vector<Actuator> actuators;    // usable on this guest, best first
  CpuSet preferred;                   // preferred CPUs at the time of hello
  // Optional fields (an older agent sends neither): the guest's kernel class
  // ("stock-6.6-and-later"; lower-case letters, digits, '.' and '-') and
  // whether hints of policy auto fold it (false: acknowledged with all CPUs
  // and actuator none, because the bench shows folding that class losing).
  std::optional<std::string> kernelClass;
  bool foldsOnAutoHints = true;
  friend bool operator==(const AgentInfo&, const AgentInfo&) = default;
};

// Both directions, first thing after the channel (re)opens.
struct Hello {
  Role role = Role::Host;
  std::vector<std::uint32_t> versions;  // protocol versions the sender speaks
  std::string software;                 // e.g. "vcpufold-hostd 0.1.0"
  std::optional<AgentInfo> agent;       // present exactly when role == Agent
  friend bool operator==(const Hello&, const Hello&) = default;
};

// Host to guest: keep this many vCPUs preferred until ttl expires.
struct Hint {
  std::uint64_t seq = 0;
  std::uint32_t vcpus = 0;
  std::uint32_t ttlMs = 0;
  HintPolicy policy = HintPolicy::Auto;
  std::string reason;
  friend bool operator==(const Hint&, const Hint&) = default;
};

// Guest to host: the hint with this seq is in force as these CPUs.
struct Ack {
  std::uint64_t seq = 0;
  CpuSet applied;
  Actuator actuator = Actuator::None;
  friend bool operator==(const Ack&, const Ack&) = default;
};

// Guest to host, every interval: what the guest wants and what it suffers.
struct Status {
  double demand = 0.0;            // runnable tasks, averaged over the interval
  std::uint32_t stealBp = 0;      // steal over the interval, basis points of the running CPUs
  std::uint32_t intervalMs = 0;   // the interval both figures cover
  CpuSet preferred;               // preferred CPUs now
  Control control = Control::None;
  friend bool operator==(const Status&, const Status&) = default;
};

// Either direction: a message (or the hint with seq) was refused, and why.
struct ErrorMessage {
  std::optional<std::uint64_t> seq;
  std::string reason;
  friend bool operator==(const ErrorMessage&, const ErrorMessage&) = default;
};

using Message = std::variant<Hello, Hint, Ack, Status, ErrorMessage>;

// Wire names ("hello", "kernel", "auto", ...), shared by codec, logs and metrics.
const char* messageTypeName(const Message& message);
const char* roleName(Role role);
const char* actuatorName(Actuator actuator);
const char* hintPolicyName(HintPolicy policy);
const char* controlName(Control control);
std::optional<Actuator> actuatorFromName(std::string_view name);

}  // namespace vcpufold::protocol
