// SPDX-License-Identifier: GPL-2.0-or-later
// Fuzzes the live domain XML hostd reads for the vcpufold channel's socket
// (libvirt writes it, but a domain definition is user input).

#include "fuzz_check.h"
#include "vcpufold/hostd/domain_xml.h"

using vcpufold::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto channel = vcpufold::hostd::findHintChannel(vcpufold::fuzz::textOf(data, size));
  if (channel && *channel) check(!(*channel)->socketPath.empty());
  if (!channel) check(!channel.error().message.empty());
  return 0;
}
