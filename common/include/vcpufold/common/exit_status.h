// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The daemons' exit statuses, sysexits.h's values where one fits, so that
// systemd (RestartPreventExitStatus=64 78 in both units) and scripts can tell
// a fault a restart may cure from one it cannot.

namespace vcpufold {

inline constexpr int kExitOk = 0;
// A start-up or run-time failure (no channel yet, a socket in use): a restart may cure it.
inline constexpr int kExitFailure = 1;
// EX_USAGE: the command line is wrong (an unknown option, a missing value).
inline constexpr int kExitUsage = 64;
// EX_CONFIG: the configuration file is wrong, or asks for what this machine
// cannot do; nothing changes until an administrator edits it.
inline constexpr int kExitConfig = 78;

}  // namespace vcpufold
