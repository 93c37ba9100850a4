// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
namespace vcpufold::agent {
// The product version (CMake's VCPUFOLD_VERSION: the project's, or the Debian
// package's), in one generated file so a new version recompiles only it.
extern const char* const kAgentVersion;
}  // namespace vcpufold::agent
