// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/channel_peer.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "vcpufold/common/system_paths.h"
#include "vcpufold/hostd/qemu_threads.h"

namespace vcpufold::hostd {

Expected<pid_t> peerPidOf(int fd) {
  ucred credentials{};
  socklen_t length = sizeof credentials;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0)
    return Error{std::string("SO_PEERCRED: ") + std::strerror(errno)};
  if (credentials.pid <= 0) return Error{"SO_PEERCRED: no peer process"};
  return credentials.pid;
}

std::optional<std::string> refusedLibvirtPeer(const RootedFs& fs, const std::string& domain, int fd) {
  const auto peer = peerPidOf(fd);
  if (!peer) return peer.error().message;
  const auto qemu = readLibvirtQemuPid(fs, domain);
  if (!qemu) return "cannot tell the domain's QEMU (" + qemu.error().message + ")";
  if (*peer == *qemu) return std::nullopt;
  // Some libvirt versions open a chardev's listening socket themselves and
  // pass it to QEMU; the peer is then the libvirt daemon that listened.
  auto comm = fs.readFile(std::string(paths::kProcDir) + "/" + std::to_string(*peer) + "/comm");
  if (comm && (*comm == "libvirtd\n" || *comm == "virtqemud\n")) return std::nullopt;
  return "served by pid " + std::to_string(*peer) + ", not the domain's QEMU (pid " + std::to_string(*qemu) +
         ") or libvirt";
}

std::optional<std::string> refusedSocketFile(const std::string& path, std::optional<uid_t> owner) {
  if (path.size() > paths::kMaxSocketPath)
    return path + ": " + std::to_string(path.size()) + " bytes, over the " + std::to_string(paths::kMaxSocketPath) +
           " a UNIX socket path may have";
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return std::nullopt;  // gone meanwhile: connect will say
  if (S_ISLNK(info.st_mode)) return path + ": a symlink (sockets in the QMP directory must be real)";
  if (!S_ISSOCK(info.st_mode)) return path + ": not a socket";
  if (info.st_uid != 0 && info.st_uid != ::geteuid() && info.st_uid != owner)
    return path + ": owned by uid " + std::to_string(info.st_uid) +
           ", not root, hostd's user or inventory.qmp_socket_owner";
  return std::nullopt;
}

}  // namespace vcpufold::hostd
