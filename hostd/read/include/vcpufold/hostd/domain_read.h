// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// What one libvirt read of a domain could not get, and the record hostd keeps
// then. A failed call is a fault of that moment (libvirtd busy, a domain's
// job lock held), not a fact about the VM: a failed GetInfo is not "0 vCPUs"
// (which would hint it 1), a failed XML read is not "no channel", a failed
// lookup is not "the VM is gone". The last known values stand for a bounded
// time; a VM never read whole is not reported until it is.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vcpufold/hostd/vm_record.h"

namespace vcpufold::hostd {

// The calls of one read of a domain that failed.
struct DomainReadGaps {
  bool info = false;  // virDomainGetInfo: the vCPU count
  bool xml = false;   // virDomainGetXMLDesc: the channel, flavor, partition
  [[nodiscard]] bool any() const { return info || xml; }
};

// How long a failed call's last known values (or a domain whose lookup fails
// for another reason than "no such domain") are kept before the failure
// counts: past it, a domain with unreadable info is dropped (its hint stops:
// the guest unfolds), its channel reads as unusable.
inline constexpr std::chrono::seconds kLastKnownHold{30};

struct DomainReadOutcome {
  std::optional<VmRecord> record;  // none: not reported this refresh
  std::vector<std::string> notes;  // what was kept or dropped, and why
};

// fresh: as read, gaps: what failed, previous: the record kept from before
// (none: new), failingFor: how long this domain's reads have been failing.
DomainReadOutcome keepLastKnown(VmRecord fresh, const DomainReadGaps& gaps, const VmRecord* previous,
                                std::chrono::steady_clock::duration failingFor);

// Whether a domain whose lookup failed stays (its last record kept): only when
// the error is not libvirt's "no such domain" and it has failed for less than
// kLastKnownHold.
bool keepAfterFailedLookup(bool noSuchDomain, std::chrono::steady_clock::duration failingFor);

}  // namespace vcpufold::hostd
