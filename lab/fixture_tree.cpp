// SPDX-License-Identifier: GPL-2.0-or-later
#include "fixture_tree.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace vcpufold::testing {

std::filesystem::path fixturesDirectory() { return std::filesystem::path(VCPUFOLD_SOURCE_DIR) / "tests/fixtures"; }

FixtureTree::FixtureTree(const std::string& name, const std::filesystem::path& parent) {
  std::string pattern =
      ((parent.empty() ? std::filesystem::temp_directory_path() : parent) / "vcpufold-fixture-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  root_ = pattern;
  if (!name.empty()) {
    const auto source = fixturesDirectory() / name;
    if (!std::filesystem::is_directory(source)) throw std::runtime_error("no fixture " + source.string());
    std::filesystem::copy(source, root_, std::filesystem::copy_options::recursive);
  }
}

FixtureTree::~FixtureTree() {
  std::error_code ignored;
  std::filesystem::remove_all(root_, ignored);
}

void FixtureTree::write(std::string_view absolutePath, std::string_view contents) const {
  const auto path = RootedFs(root_).resolve(absolutePath);
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << contents;
}

std::string FixtureTree::read(std::string_view absolutePath) const {
  std::ifstream file(RootedFs(root_).resolve(absolutePath), std::ios::binary);
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

void FixtureTree::remove(std::string_view absolutePath) const {
  std::error_code ignored;
  std::filesystem::remove_all(RootedFs(root_).resolve(absolutePath), ignored);
}

}  // namespace vcpufold::testing
