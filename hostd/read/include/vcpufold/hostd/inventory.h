// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Where VMs come from: one interface for every inventory backend (libvirt, QMP).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vcpufold/common/expected.h"
#include "vcpufold/hostd/vcpu_sample.h"
#include "vcpufold/hostd/vm_record.h"

namespace vcpufold::hostd {

class Inventory {
 public:
  virtual ~Inventory() = default;
  [[nodiscard]] virtual std::string describe() const = 0;
  // The VMs running now.
  virtual Expected<std::vector<VmRecord>> refresh() = 0;
  // vCPU counters of the VMs of the last refresh, by name.
  virtual Expected<std::map<std::string, VmSample>> sample() = 0;
  // Things worth a log line since the last call (QEMU events, VMs appearing).
  virtual std::vector<std::string> takeNotes() { return {}; }
  // One VM's vCPU counters now (the evidence hostd takes between ticks when
  // an agent reports more demand than the last samples showed). By default
  // a sample of every VM, of which that one.
  virtual Expected<VmSample> sampleOne(const std::string& vm) {
    auto all = sample();
    if (!all) return all.error();
    const auto found = all->find(vm);
    if (found == all->end()) return Error{"no vCPU sample of " + vm};
    return found->second;
  }
};

}  // namespace vcpufold::hostd
