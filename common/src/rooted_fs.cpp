// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/common/rooted_fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace vcpufold {
namespace {

Error systemError(const std::filesystem::path& path, const char* what, int error) {
  return Error{path.string() + ": " + what + ": " + std::strerror(error)};
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

RootedFs::RootedFs(std::filesystem::path root) : root_(std::move(root)) {}

std::filesystem::path RootedFs::resolve(std::string_view absolutePath) const {
  std::string_view relative = absolutePath;
  while (!relative.empty() && relative.front() == '/') relative.remove_prefix(1);
  return root_ / std::filesystem::path(relative);
}

bool RootedFs::exists(std::string_view absolutePath) const {
  std::error_code error;
  return std::filesystem::exists(resolve(absolutePath), error);
}

bool RootedFs::isDirectory(std::string_view absolutePath) const {
  std::error_code error;
  return std::filesystem::is_directory(resolve(absolutePath), error);
}

bool RootedFs::hasWriteMode(std::string_view absolutePath) const {
  struct stat info {};
  if (::stat(resolve(absolutePath).c_str(), &info) != 0) return false;
  return S_ISREG(info.st_mode) && (info.st_mode & S_IWUSR) != 0;
}

Expected<std::string> RootedFs::readFile(std::string_view absolutePath, std::size_t maxBytes) const {
  const auto path = resolve(absolutePath);
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return systemError(path, "open", errno);
  std::string contents;
  char buffer[4096];
  for (;;) {
    const ssize_t got = ::read(fd.get(), buffer, sizeof buffer);
    if (got < 0) {
      if (errno == EINTR) continue;
      return systemError(path, "read", errno);
    }
    if (got == 0) break;
    contents.append(buffer, static_cast<std::size_t>(got));
    if (contents.size() > maxBytes)
      return Error{path.string() + ": larger than " + std::to_string(maxBytes) + " bytes"};
  }
  return contents;
}

Expected<void> RootedFs::writeExisting(std::string_view absolutePath, std::string_view contents) const {
  const auto path = resolve(absolutePath);
  FileDescriptor fd(::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC));
  if (fd.get() < 0) return systemError(path, "open for writing", errno);
  ssize_t written;
  do {
    written = ::write(fd.get(), contents.data(), contents.size());
  } while (written < 0 && errno == EINTR);
  if (written < 0) return systemError(path, "write", errno);
  if (static_cast<std::size_t>(written) != contents.size()) return Error{path.string() + ": short write"};
  return {};
}

namespace {

// The directory that holds absolutePath's last component, opened one
// component at a time from the root without following a symbolic link: a
// link planted anywhere on the way (a writable parent replaced by a link to
// /etc) cannot redirect the write. The root itself is the operator's.
Expected<int> openParentWithoutLinks(const std::filesystem::path& root, std::string_view absolutePath,
                                     std::string& name) {
  std::vector<std::string> parts;
  for (const auto& part : std::filesystem::path(absolutePath).relative_path())
    if (!part.empty()) parts.push_back(part.string());
  if (parts.empty()) return Error{std::string(absolutePath) + ": not a file path"};
  name = parts.back();
  parts.pop_back();
  int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return systemError(root, "open", errno);
  std::filesystem::path reached = root;
  for (const std::string& part : parts) {
    reached /= part;
    if (part == "." || part == "..") {
      ::close(fd);
      return Error{reached.string() + ": '.' and '..' are not followed"};
    }
    const int next = ::openat(fd, part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const int error = errno;
    ::close(fd);
    if (next < 0)
      return error == ELOOP || error == ENOTDIR
                 ? Error{reached.string() + ": not a directory (a symbolic link is not followed)"}
                 : systemError(reached, "open", error);
    fd = next;
  }
  return fd;
}

}  // namespace

Expected<void> RootedFs::replaceFile(std::string_view absolutePath, std::string_view contents, mode_t mode) const {
  const auto path = resolve(absolutePath);
  std::string name;
  auto parent = openParentWithoutLinks(root_, absolutePath, name);
  if (!parent) return parent.error().withContext(path.string());
  const FileDescriptor directory(parent.value());
  const std::string temporary = name + ".tmp";
  {
    // A temporary left by a crash is removed; O_EXCL then refuses anything
    // that appears under the name meanwhile, symbolic links included.
    if (::unlinkat(directory.get(), temporary.c_str(), 0) != 0 && errno != ENOENT)
      return systemError(path.string() + ".tmp", "unlink", errno);
    FileDescriptor fd(
        ::openat(directory.get(), temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (fd.get() < 0) return systemError(path.string() + ".tmp", "create", errno);
    if (::fchmod(fd.get(), mode) != 0) return systemError(path.string() + ".tmp", "chmod", errno);
    if (::write(fd.get(), contents.data(), contents.size()) != static_cast<ssize_t>(contents.size()))
      return systemError(path.string() + ".tmp", "write", errno);
  }
  if (::renameat(directory.get(), temporary.c_str(), directory.get(), name.c_str()) != 0)
    return systemError(path, "rename", errno);
  return {};
}

Expected<void> RootedFs::removeFile(std::string_view absolutePath) const {
  const auto path = resolve(absolutePath);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return systemError(path, "unlink", errno);
  return {};
}

Expected<void> RootedFs::makeDirectory(std::string_view absolutePath) const {
  const auto path = resolve(absolutePath);
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (error) return Error{path.string() + ": mkdir: " + error.message()};
  return {};
}

Expected<void> RootedFs::removeDirectory(std::string_view absolutePath) const {
  const auto path = resolve(absolutePath);
  if (::rmdir(path.c_str()) != 0 && errno != ENOENT) return systemError(path, "rmdir", errno);
  return {};
}

std::vector<std::string> RootedFs::listDirectory(std::string_view absolutePath) const {
  std::vector<std::string> names;
  std::error_code error;
  for (std::filesystem::directory_iterator it(resolve(absolutePath), error), end; !error && it != end;
       it.increment(error))
    names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace vcpufold
