// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A VM's fold policy: libvirt domain metadata in our namespace, e.g.
//   <policy mode="auto" min-vcpus="2" weight="200"/>
// or a [[vm]] table of hostd.toml for VMs without libvirt (min_vcpus = 2).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "vcpufold/common/expected.h"

namespace vcpufold::hostd {

inline constexpr const char* kPolicyNamespace = "https://vcpufold.org/xmlns/policy/1";
inline constexpr const char* kPolicyKey = "vcpufold";

enum class FoldMode {
  Auto,   // host hints by fair share (default)
  Off,    // never fold: hint = all vCPUs, guest fallback disabled
  Fixed,  // always `vcpus`
  Guest,  // no host hints: the guest's own steal fallback decides
};

struct FoldPolicy {
  FoldMode mode = FoldMode::Auto;
  std::uint32_t minVcpus = 1;
  std::optional<std::uint32_t> maxVcpus;
  std::optional<std::uint32_t> fixedVcpus;  // mode fixed only
  std::optional<std::uint32_t> weight;      // 1..10000; unset: the VM cgroup's weight
  friend bool operator==(const FoldPolicy&, const FoldPolicy&) = default;
};

const char* foldModeName(FoldMode mode);
std::optional<FoldMode> foldModeFromName(std::string_view name);

// How problems spell the fields: as the metadata's XML attributes or as
// hostd.toml's keys.
enum class PolicySpelling { Xml, Toml };

// Checks the relations between fields (fixed needs vcpus, min <= max, ranges).
Expected<void> validatePolicy(const FoldPolicy& policy, PolicySpelling spelling = PolicySpelling::Xml);

// The element to store with virsh metadata / virDomainSetMetadata.
std::string formatPolicyXml(const FoldPolicy& policy);

}  // namespace vcpufold::hostd
