// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// What hostd needs from a libvirt domain's live XML.

#include <optional>
#include <string>
#include <string_view>

#include "vcpufold/common/expected.h"

namespace vcpufold::hostd {

inline constexpr const char* kHintPortName = "org.vcpufold.hint.0";

struct DomainChannel {
  std::string socketPath;  // the host end of the virtio-serial port
  std::string state;       // "connected", "disconnected", or "" when libvirt does not say
};

// The UNIX socket of <channel type='unix'> whose <target type='virtio'>
// is named org.vcpufold.hint.0, from the live XML (libvirt fills in the
// generated path there when the definition has none). nullopt: no such channel.
Expected<std::optional<DomainChannel>> findHintChannel(std::string_view domainXml);

// What fleet rules match on, when the domain says it (none otherwise, and on
// XML that does not parse: a rule then simply does not match).
struct DomainFacts {
  // <nova:flavor name=...> of OpenStack Nova's <nova:instance> metadata, in any
  // version of its namespace (http://openstack.org/xmlns/libvirt/nova/1.x).
  std::optional<std::string> novaFlavor;
  std::optional<std::string> partition;  // <resource><partition>
};
DomainFacts readDomainFacts(std::string_view domainXml);

}  // namespace vcpufold::hostd
