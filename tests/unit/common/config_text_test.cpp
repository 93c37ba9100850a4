// SPDX-License-Identifier: GPL-2.0-or-later
// Both daemons' configuration text: where it is read from, and how typed
// values come out of it.
#include <gtest/gtest.h>

#include "fixture_tree.h"
#include "vcpufold/common/config_file.h"
#include "vcpufold/common/toml_reader.h"
#include "vcpufold/common/toml_text.h"

using namespace vcpufold;
using vcpufold::testing::FixtureTree;

namespace {

struct Problems {
  std::vector<std::string> list;
  bool has(const std::string& text) const {
    for (const auto& problem : list)
      if (problem == text) return true;
    return false;
  }
};

toml::table tableOf(const std::string& text) {
  auto parsed = parseTomlText(text, "test.toml");
  EXPECT_TRUE(parsed) << parsed.error().message;
  return parsed ? *parsed : toml::table{};
}

struct Sample {
  std::uint32_t count = 7;
  int nice = 0;
  double share = 0.5;
  std::string name = "default";
  bool on = false;
};

Expected<Sample> parseSample(std::string_view text, const std::string& source) {
  auto parsed = parseTomlText(text, source);
  if (!parsed) return parsed.error();
  Sample sample;
  std::vector<std::string> problems;
  TomlReader(*parsed, problems).unsignedInteger("a.count", sample.count);
  if (!problems.empty()) return Error{problems.front()};
  return sample;
}

}  // namespace

TEST(TomlReader, ReadsEachTypeAndLeavesAbsentKeysAlone) {
  const auto table = tableOf("[a]\ncount = 3\nnice = -5\nshare = 2\nname = \"x\"\non = true\n");
  Problems problems;
  TomlReader reader(table, problems.list);
  Sample sample;
  reader.unsignedInteger("a.count", sample.count);
  reader.signedInteger("a.nice", sample.nice, -20, 19);
  reader.number("a.share", sample.share);
  reader.string("a.name", sample.name);
  reader.boolean("a.on", sample.on);
  std::optional<std::uint32_t> absent;
  reader.optionalUnsigned("a.absent", absent);
  EXPECT_TRUE(problems.list.empty());
  EXPECT_EQ(sample.count, 3u);
  EXPECT_EQ(sample.nice, -5);
  EXPECT_EQ(sample.share, 2.0) << "an integer is a number";
  EXPECT_EQ(sample.name, "x");
  EXPECT_TRUE(sample.on);
  EXPECT_FALSE(absent);
  EXPECT_TRUE(reader.has("a.count"));
  EXPECT_FALSE(reader.has("a.absent"));
}

TEST(TomlReader, EveryProblemIsCollectedAndTargetsKeepTheirValues) {
  const auto table = tableOf("[a]\ncount = -1\nnice = 20\nshare = \"half\"\nname = 3\non = 1\nfloat = 25e20\n");
  Problems problems;
  TomlReader reader(table, problems.list, "vm[0].");
  Sample sample;
  std::uint32_t fromFloat = 9;
  reader.unsignedInteger("a.count", sample.count, 100);
  reader.signedInteger("a.nice", sample.nice, -20, 19);
  reader.number("a.share", sample.share);
  reader.string("a.name", sample.name);
  reader.boolean("a.on", sample.on);
  // Found by fuzzing: converting 25e20 to an integer was undefined behaviour.
  reader.unsignedInteger("a.float", fromFloat);
  EXPECT_EQ(problems.list.size(), 6u);
  EXPECT_TRUE(problems.has("vm[0].a.count: expected an integer 0..100"));
  EXPECT_TRUE(problems.has("vm[0].a.nice: expected an integer -20..19"));
  EXPECT_TRUE(problems.has("vm[0].a.share: expected a number"));
  EXPECT_TRUE(problems.has("vm[0].a.name: expected a string"));
  EXPECT_TRUE(problems.has("vm[0].a.on: expected true or false"));
  EXPECT_TRUE(problems.has("vm[0].a.float: expected an integer 0..4294967295"));
  EXPECT_EQ(sample.count, 7u);
  EXPECT_EQ(sample.nice, 0);
  EXPECT_EQ(fromFloat, 9u);
}

TEST(TomlReader, RangesAndArraysOfStrings) {
  const auto table = tableOf(
      "low = 0\nhigh = 9.5\ninside = 2.5\ncount = 0\nnames = [\"a\", 3, \"b\"]\nnot_array = \"x\"\n");
  Problems problems;
  TomlReader reader(table, problems.list);
  double low = 1, high = 1, inside = 1, absent = 4;
  std::uint32_t count = 5;
  reader.numberIn("low", low, 0.5, 9);
  reader.numberIn("high", high, 0.5, 9);
  reader.numberIn("inside", inside, 0.5, 9);
  reader.numberIn("absent", absent, 0.5, 9);
  reader.unsignedIntegerIn("count", count, 1, 64);
  EXPECT_EQ(reader.strings("names"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(reader.array("not_array"), nullptr);
  EXPECT_EQ(reader.array("absent"), nullptr);
  EXPECT_EQ(problems.list,
            (std::vector<std::string>{"low: expected a number 0.5..9", "high: expected a number 0.5..9",
                                      "count: expected an integer 1..64", "names: expected an array of strings",
                                      "not_array: expected an array"}));
  EXPECT_EQ(low, 1.0);
  EXPECT_EQ(high, 1.0);
  EXPECT_EQ(inside, 2.5);
  EXPECT_EQ(absent, 4.0);
  EXPECT_EQ(count, 5u);
}

TEST(TomlReader, UnknownKeysAreNamedInTheFilesSpelling) {
  const auto table = tableOf("top = 1\n[a]\ncount = 1\ncuont = 2\n[b]\nx = 1\n[[vm]]\nname = \"v\"\n");
  Problems problems;
  TomlReader(table, problems.list).rejectUnknownKeys({"a.count", "b.x"}, {"vm"});
  EXPECT_EQ(problems.list, (std::vector<std::string>{"a.cuont: unknown key", "top: unknown key"}));
}

TEST(ConfigFile, AnAbsentDefaultGivesTheDefaultsAnExplicitPathMustExist) {
  FixtureTree tree("");
  const auto absent = loadConfigFile(tree.root(), "/etc/vcpufold/sample.toml", false, parseSample);
  ASSERT_TRUE(absent) << absent.error().message;
  EXPECT_EQ(absent->count, 7u);
  const auto missing = loadConfigFile(tree.root(), (tree.root() / "nowhere.toml").string(), true, parseSample);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("nowhere.toml"), std::string::npos) << missing.error().message;
}

TEST(ConfigFile, TheDefaultIsReadUnderTheRootAndAnExplicitPathOnTheHost) {
  FixtureTree tree("");
  tree.write("/etc/vcpufold/sample.toml", "[a]\ncount = 4\n");
  const auto underRoot = loadConfigFile(tree.root(), "/etc/vcpufold/sample.toml", false, parseSample);
  ASSERT_TRUE(underRoot) << underRoot.error().message;
  EXPECT_EQ(underRoot->count, 4u);
  const std::string hostPath = (tree.root() / "etc/vcpufold/sample.toml").string();
  const auto explicitPath = loadConfigFile("/nonexistent-root", hostPath, true, parseSample);
  ASSERT_TRUE(explicitPath) << explicitPath.error().message;
  EXPECT_EQ(explicitPath->count, 4u);
  tree.write("/etc/vcpufold/sample.toml", "[a]\ncount = \"four\"\n");
  const auto bad = loadConfigFile(tree.root(), "/etc/vcpufold/sample.toml", false, parseSample);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "a.count: expected an integer 0..4294967295");
}

TEST(ConfigFile, ADefaultFileThatCannotBeReadIsAnErrorNotTheDefaults) {
  FixtureTree tree("");
  // A directory where the file should be: there, but not readable as a file.
  tree.write("/etc/vcpufold/sample.toml/inside", "");
  const auto unreadable = loadConfigFile(tree.root(), "/etc/vcpufold/sample.toml", false, parseSample);
  EXPECT_FALSE(unreadable) << "count " << (unreadable ? unreadable->count : 0);
}
