// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/libvirt_support.h"

#include <libvirt/virterror.h>

namespace vcpufold::hostd {
namespace {

void quietErrors(void*, virErrorPtr) {}

}  // namespace

Error libvirtError(const std::string& what) {
  const char* message = virGetLastErrorMessage();
  return Error{what + ": " + (message ? message : "unknown libvirt error")};
}

void silenceLibvirtErrors() { virSetErrorFunc(nullptr, quietErrors); }

}  // namespace vcpufold::hostd
