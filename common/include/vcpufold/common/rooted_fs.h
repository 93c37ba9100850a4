// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// RootedFs: the one way vcpufold touches /proc, /sys, /dev, cgroupfs and /run.
// Every path given to it is absolute as on a live system ("/proc/stat") and is
// resolved under a root directory, "/" in production and a fixture tree in
// tests, so whole daemons run against captured trees. The paths themselves
// are named in system_paths.h.

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "vcpufold/common/expected.h"

namespace vcpufold {

class RootedFs {
 public:
  explicit RootedFs(std::filesystem::path root = "/");

  [[nodiscard]] const std::filesystem::path& root() const { return root_; }
  // The real path of an absolute system path under the root.
  [[nodiscard]] std::filesystem::path resolve(std::string_view absolutePath) const;

  [[nodiscard]] bool exists(std::string_view absolutePath) const;
  [[nodiscard]] bool isDirectory(std::string_view absolutePath) const;
  // True when the owner write bit is set. kernfs refuses writes to files
  // without a write handler even for root, and it shows them as 0444, so the
  // mode (not access(2), which root always passes) tells a writable knob.
  [[nodiscard]] bool hasWriteMode(std::string_view absolutePath) const;

  // Reads a whole (small) file; sysfs and procfs files report size 0, so read to EOF.
  Expected<std::string> readFile(std::string_view absolutePath, std::size_t maxBytes = 1 << 20) const;
  // One write(2) of contents to an existing file, as sysfs and cgroupfs need
  // (a knob takes one value per write). Never creates the file.
  Expected<void> writeExisting(std::string_view absolutePath, std::string_view contents) const;
  // Creates or replaces a regular file atomically (write to PATH.tmp, rename),
  // with exactly this mode whatever the umask. The temporary is created
  // exclusively, so a link planted under its name is never written through;
  // and the directories on the way are opened without following symbolic
  // links, so no link in the path (a parent directory replaced by a link)
  // redirects the write: such a path is an error.
  Expected<void> replaceFile(std::string_view absolutePath, std::string_view contents, mode_t mode = 0600) const;
  Expected<void> removeFile(std::string_view absolutePath) const;
  Expected<void> makeDirectory(std::string_view absolutePath) const;    // with parents; ok if it exists
  Expected<void> removeDirectory(std::string_view absolutePath) const;  // rmdir, one level
  // Names of the entries of a directory, sorted; empty on error.
  [[nodiscard]] std::vector<std::string> listDirectory(std::string_view absolutePath) const;

 private:
  std::filesystem::path root_;
};

}  // namespace vcpufold
