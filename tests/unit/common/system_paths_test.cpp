// SPDX-License-Identifier: GPL-2.0-or-later
// The rooted-path rule: every OS path the product reads or writes is named
// once, in system_paths.h, and reached through RootedFs, so that tests and
// --root can point all of them at a fixture tree. A product source elsewhere
// with a "/proc, "/sys, "/run, "/dev or "/etc string literal breaks the rule.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace {

const std::filesystem::path kSource = VCPUFOLD_SOURCE_DIR;

// The line without its // comment (a comment may quote a path; a "//" inside
// a string literal does not start one).
std::string codeOf(const std::string& line) {
  bool inString = false;
  for (std::size_t at = 0; at + 1 < line.size(); ++at) {
    if (line[at] == '\\' && inString) {
      ++at;
    } else if (line[at] == '"') {
      inString = !inString;
    } else if (!inString && line[at] == '/' && line[at + 1] == '/') {
      return line.substr(0, at);
    }
  }
  return line;
}

std::vector<std::string> literalOsPaths(const std::filesystem::path& file) {
  static const std::regex osPath(R"re("/(proc|sys|run|dev|etc)\b)re");
  std::vector<std::string> found;
  std::ifstream in(file);
  unsigned number = 0;
  bool inBlockComment = false;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (inBlockComment) {
      if (line.find("*/") == std::string::npos) continue;
      line = line.substr(line.find("*/") + 2);
      inBlockComment = false;
    }
    if (const auto opens = line.find("/*"); opens != std::string::npos && line.find("*/", opens) == std::string::npos) {
      line = line.substr(0, opens);
      inBlockComment = true;
    }
    if (std::regex_search(codeOf(line), osPath))
      found.push_back(std::filesystem::relative(file, kSource).string() + ":" + std::to_string(number) + ": " + line);
  }
  return found;
}

}  // namespace

TEST(SystemPaths, NoProductSourceButSystemPathsNamesAnOsPath) {
  std::vector<std::string> offending;
  unsigned sources = 0;
  for (const char* area : {"common", "protocol", "hostd", "guest-agent"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(kSource / area)) {
      const auto extension = entry.path().extension();
      if (!entry.is_regular_file() || (extension != ".cpp" && extension != ".h")) continue;
      if (entry.path().filename() == "system_paths.h") continue;
      ++sources;
      for (auto& line : literalOsPaths(entry.path())) offending.push_back(std::move(line));
    }
  }
  EXPECT_GT(sources, 50U) << "the product's sources were not found under " << kSource;
  std::string listed;
  for (const auto& line : offending) listed += "  " + line + "\n";
  EXPECT_TRUE(offending.empty()) << "OS paths named outside common/include/vcpufold/common/system_paths.h:\n" << listed;
}

TEST(SystemPaths, TheScanFindsALiteralAndSkipsComments) {
  const auto file = std::filesystem::temp_directory_path() / "vcpufold-system-paths-scan.cpp";
  std::ofstream(file) << "// reads \"/proc/stat\"\n"
                         "const char* a = \"/proc/stat\";\n"
                         "auto b = fs.read(kStat);  // not \"/sys/x\"\n"
                         "/* \"/etc/x\"\n   \"/run/y\" */\n"
                         "auto c = \"http://example\" + \"/dev/null\";\n"
                         "auto d = \"/var/tmp/x\";\n";
  const auto found = literalOsPaths(file);
  std::filesystem::remove(file);
  ASSERT_EQ(found.size(), 2U);
  EXPECT_NE(found[0].find(":2: "), std::string::npos) << found[0];
  EXPECT_NE(found[1].find(":6: "), std::string::npos) << found[1];
}
