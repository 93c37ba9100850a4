// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Who serves a VM's hint socket, checked at every connect: hostd talks only
// to the VM's own QEMU. A domain's XML (which a VM owner may edit) can name
// any socket path, and a file in the QMP directory can be replaced between
// two looks; a hint sent to another service is a hint lost, and its answers
// would be taken for the guest's.

#include <sys/types.h>

#include <optional>
#include <string>

#include "vcpufold/common/expected.h"
#include "vcpufold/common/rooted_fs.h"

namespace vcpufold::hostd {

// The process at the other end of a connected UNIX socket (SO_PEERCRED).
Expected<pid_t> peerPidOf(int fd);

// libvirt: the peer of `fd` must be `domain`'s QEMU, whose pid libvirt keeps
// in /run/libvirt/qemu/DOMAIN.pid (or the libvirt daemon, libvirtd or
// virtqemud, where libvirt opened the listening socket and passed it to QEMU).
// Why not, or none when it is.
std::optional<std::string> refusedLibvirtPeer(const RootedFs& fs, const std::string& domain, int fd);

// A socket file hostd may connect to from a directory others may write: a
// socket (not a symlink, not another file) owned by root, hostd's own user
// or `owner`, and a path short enough for a UNIX socket. Why not, or none.
// A path that is gone is left for the connect to report.
std::optional<std::string> refusedSocketFile(const std::string& path, std::optional<uid_t> owner);

}  // namespace vcpufold::hostd
