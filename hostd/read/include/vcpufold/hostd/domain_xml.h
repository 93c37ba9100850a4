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

}  // namespace vcpufold::hostd
