// SPDX-License-Identifier: GPL-2.0-or-later
// Fuzzes both daemons' TOML configuration readers (the first byte picks:
// 'a' the agent's, anything else hostd's): a file either parses into a
// configuration that validates, or is refused with the reasons.

#include <string>

#include "fuzz_check.h"
#include "vcpufold/agent/agent_config.h"
#include "vcpufold/hostd/hostd_config.h"

using vcpufold::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto text = vcpufold::fuzz::textOf(data + 1, size - 1);
  if (data[0] == 'a') {
    const auto config = vcpufold::agent::parseAgentConfig(text, "agent.toml");
    if (config)
      check(vcpufold::agent::validateAgentConfig(*config).ok());
    else
      check(!config.error().message.empty());
  } else {
    const auto config = vcpufold::hostd::parseHostdConfig(text, "hostd.toml");
    if (config)
      check(vcpufold::hostd::validateHostdConfig(*config).ok());
    else
      check(!config.error().message.empty());
  }
  return 0;
}
