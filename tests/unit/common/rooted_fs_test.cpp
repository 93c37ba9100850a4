// SPDX-License-Identifier: GPL-2.0-or-later
// RootedFs::replaceFile: the mode asked for whatever the umask, atomic
// replacement, and neither a temporary nor a parent directory that is ever
// written through a planted link.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "fixture_tree.h"

using vcpufold::testing::FixtureTree;

namespace {

// The daemons run with UMask=0077; a file another user must read still gets its mode.
class UmaskScope {
 public:
  explicit UmaskScope(mode_t mask) : previous_(::umask(mask)) {}
  ~UmaskScope() { ::umask(previous_); }
  UmaskScope(const UmaskScope&) = delete;
  UmaskScope& operator=(const UmaskScope&) = delete;

 private:
  mode_t previous_;
};

mode_t modeOf(const std::filesystem::path& path) {
  struct stat info {};
  EXPECT_EQ(::lstat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

}  // namespace

TEST(RootedFsReplaceFile, GivesTheModeAskedForWhateverTheUmask) {
  FixtureTree tree("");
  UmaskScope umask(0077);
  ASSERT_TRUE(tree.fs().makeDirectory("/var/lib/textfiles"));
  ASSERT_TRUE(tree.fs().replaceFile("/var/lib/textfiles/a.prom", "one\n", 0644));
  EXPECT_EQ(modeOf(tree.fs().resolve("/var/lib/textfiles/a.prom")), 0644u);
  ASSERT_TRUE(tree.fs().replaceFile("/var/lib/textfiles/b.json", "{}"));
  EXPECT_EQ(modeOf(tree.fs().resolve("/var/lib/textfiles/b.json")), 0600u) << "the default stays private";
  ASSERT_TRUE(tree.fs().replaceFile("/var/lib/textfiles/a.prom", "two\n", 0644));
  EXPECT_EQ(tree.read("/var/lib/textfiles/a.prom"), "two\n");
  EXPECT_FALSE(tree.fs().exists("/var/lib/textfiles/a.prom.tmp"));
}

TEST(RootedFsReplaceFile, NeverWritesThroughALinkPlantedAsItsTemporary) {
  FixtureTree tree("");
  tree.write("/etc/precious", "keep me\n");
  tree.write("/var/lib/textfiles/.keep", "");
  std::filesystem::create_symlink(tree.fs().resolve("/etc/precious"),
                                  tree.fs().resolve("/var/lib/textfiles/a.prom.tmp"));
  ASSERT_TRUE(tree.fs().replaceFile("/var/lib/textfiles/a.prom", "metrics\n", 0644));
  EXPECT_EQ(tree.read("/etc/precious"), "keep me\n");
  EXPECT_EQ(tree.read("/var/lib/textfiles/a.prom"), "metrics\n");
  EXPECT_FALSE(std::filesystem::is_symlink(tree.fs().resolve("/var/lib/textfiles/a.prom")));
}

TEST(RootedFsReplaceFile, ReplacesALinkAtTheTargetInsteadOfFollowingIt) {
  FixtureTree tree("");
  tree.write("/etc/precious", "keep me\n");
  tree.write("/var/lib/textfiles/.keep", "");
  std::filesystem::create_symlink(tree.fs().resolve("/etc/precious"), tree.fs().resolve("/var/lib/textfiles/a.prom"));
  ASSERT_TRUE(tree.fs().replaceFile("/var/lib/textfiles/a.prom", "metrics\n", 0644));
  EXPECT_EQ(tree.read("/etc/precious"), "keep me\n");
  EXPECT_FALSE(std::filesystem::is_symlink(tree.fs().resolve("/var/lib/textfiles/a.prom")));
}

TEST(RootedFsReplaceFile, AMissingDirectoryIsAnErrorNamingThePath) {
  FixtureTree tree("");
  auto written = tree.fs().replaceFile("/var/lib/absent/a.prom", "x\n", 0644);
  ASSERT_FALSE(written);
  EXPECT_NE(written.error().message.find("/var/lib/absent"), std::string::npos) << written.error().message;
  EXPECT_NE(written.error().message.find("No such file or directory"), std::string::npos) << written.error().message;
}

TEST(RootedFsReplaceFile, ALinkedParentDirectoryDoesNotRedirectTheWrite) {
  // Without the systemd sandbox, a user who can replace the textfile's
  // directory by a link to /etc must not get root to write there.
  FixtureTree tree("");
  tree.write("/etc/precious", "keep me\n");
  tree.write("/var/lib/real/.keep", "");
  std::filesystem::create_symlink(tree.fs().resolve("/etc"), tree.fs().resolve("/var/lib/textfiles"));
  auto written = tree.fs().replaceFile("/var/lib/textfiles/precious", "metrics\n", 0644);
  ASSERT_FALSE(written);
  EXPECT_NE(written.error().message.find("/var/lib/textfiles: not a directory (a symbolic link is not followed)"),
            std::string::npos)
      << written.error().message;
  EXPECT_EQ(tree.read("/etc/precious"), "keep me\n");
  EXPECT_FALSE(tree.fs().exists("/etc/precious.tmp"));
  // A link higher up is refused the same way.
  std::filesystem::create_symlink(tree.fs().resolve("/var/lib"), tree.fs().resolve("/var/alias"));
  EXPECT_FALSE(tree.fs().replaceFile("/var/alias/real/a.prom", "x\n", 0644));
  EXPECT_FALSE(tree.fs().exists("/var/lib/real/a.prom"));
  EXPECT_TRUE(tree.fs().replaceFile("/var/lib/real/a.prom", "x\n", 0644)) << "the real path is fine";
}
