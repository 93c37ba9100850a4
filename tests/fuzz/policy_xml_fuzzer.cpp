// SPDX-License-Identifier: GPL-2.0-or-later
// Fuzzes the per-VM policy read from libvirt metadata (anyone who may run
// `virsh metadata` writes it): any bytes give a policy that validates, or an
// error that says why; never a crash, a leak or undefined behaviour.

#include "fuzz_check.h"
#include "vcpufold/hostd/policy_xml.h"

using namespace vcpufold::hostd;
using vcpufold::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto policy = parsePolicyXml(vcpufold::fuzz::textOf(data, size));
  if (policy)
    check(validatePolicy(*policy).ok());
  else
    check(!policy.error().message.empty());
  return 0;
}
