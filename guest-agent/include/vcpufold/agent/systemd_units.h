// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// SystemdUnits: the one place that talks to systemd (D-Bus, sd-bus). Sets a
// unit's AllowedCPUs= at run time, as "systemctl set-property --runtime UNIT
// AllowedCPUs=..." does; systemd then writes cpuset.cpus itself, so the agent
// never fights systemd over cgroupfs.

#include <memory>
#include <string>
#include <vector>

#include "vcpufold/common/expected.h"
#include "vcpufold/protocol/cpu_set.h"

namespace vcpufold::agent {

// systemd's D-Bus form of a CPU set: byte i, bit j is CPU 8*i+j; no trailing zero bytes.
std::vector<std::uint8_t> systemdCpuMask(const protocol::CpuSet& cpus);

class SystemdUnits {
 public:
  virtual ~SystemdUnits() = default;
  // cpus empty: reset AllowedCPUs= (no restriction).
  virtual Expected<void> setAllowedCpus(const std::string& unit, const protocol::CpuSet& cpus) = 0;
};

// Connects to the system bus; fails when there is none.
Expected<std::unique_ptr<SystemdUnits>> connectSystemd();

}  // namespace vcpufold::agent
