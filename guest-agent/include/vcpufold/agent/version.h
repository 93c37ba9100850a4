// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
namespace vcpufold::agent {
// The product version, set by CMake from project(VERSION).
extern const char* const kAgentVersion;
}  // namespace vcpufold::agent
