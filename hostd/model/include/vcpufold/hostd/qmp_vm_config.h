// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A VM run by plain QEMU, as hostd.toml declares it: read by the
// configuration, used by the QMP inventory.

#include <string>

#include "vcpufold/hostd/policy.h"

namespace vcpufold::hostd {

// A VM run by plain QEMU, declared in [[vm]] (or found in qmp.directory).
struct QmpVmConfig {
  std::string name;
  std::string qmpSocket;
  std::string hintSocket;
  FoldPolicy policy;
  bool declared = true;  // a [[vm]] table (its policy is the VM's own); false: found in qmp_directory
  friend bool operator==(const QmpVmConfig&, const QmpVmConfig&) = default;
};

}  // namespace vcpufold::hostd
