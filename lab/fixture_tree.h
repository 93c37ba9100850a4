// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// FixtureTree: a private copy of a captured tree under tests/fixtures, for one
// test to read and change; removed when the test ends.

#include <filesystem>
#include <string>
#include <string_view>

#include "vcpufold/common/rooted_fs.h"

namespace vcpufold::testing {

class FixtureTree {
 public:
  // name: a directory under tests/fixtures, or "" for an empty tree.
  // parent: where the copy is made (default: the temporary directory).
  explicit FixtureTree(const std::string& name, const std::filesystem::path& parent = {});
  ~FixtureTree();
  FixtureTree(const FixtureTree&) = delete;
  FixtureTree& operator=(const FixtureTree&) = delete;

  [[nodiscard]] const std::filesystem::path& root() const { return root_; }
  [[nodiscard]] RootedFs fs() const { return RootedFs(root_); }
  // Writes a file (creating parent directories) at an absolute system path.
  void write(std::string_view absolutePath, std::string_view contents) const;
  [[nodiscard]] std::string read(std::string_view absolutePath) const;
  void remove(std::string_view absolutePath) const;

 private:
  std::filesystem::path root_;
};

std::filesystem::path fixturesDirectory();

}  // namespace vcpufold::testing
