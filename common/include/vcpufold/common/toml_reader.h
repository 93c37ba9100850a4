// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Typed values out of a parsed configuration table, for both daemons: every
// problem is collected (an operator fixes a file once, not once per error),
// and problems name the key in the file's own spelling.

#include <toml++/toml.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace vcpufold {

class TomlReader {
 public:
  // prefix goes before every key in a problem, e.g. "vm[2]." for an array of tables.
  TomlReader(const toml::table& table, std::vector<std::string>& problems, std::string prefix = {});

  // key is a dotted path ("agent.interval_ms"). A key that is absent leaves
  // target as it was; one of the wrong type or range adds a problem and
  // leaves target as it was.
  bool has(const char* key) const;
  // A problem for every key not in `known`, spelled "table.key" for keys of
  // top-level tables and "key" otherwise; `skipped` top-level keys are the
  // caller's to check (arrays of tables). A typo must not silently fall back
  // to a default.
  void rejectUnknownKeys(const std::set<std::string>& known, const std::set<std::string>& skipped = {});
  void unsignedInteger(const char* key, std::uint32_t& target, std::uint32_t max = UINT32_MAX);
  void optionalUnsigned(const char* key, std::optional<std::uint32_t>& target);
  void signedInteger(const char* key, int& target, int min, int max);
  void unsignedIntegerIn(const char* key, std::uint32_t& target, std::uint32_t min, std::uint32_t max);
  void number(const char* key, double& target);
  // A finite number within min..max.
  void numberIn(const char* key, double& target, double min, double max);
  // An array, or none when the key is absent (or not an array: a problem).
  const toml::array* array(const char* key);
  // Strings of an array key; an element that is not one is a problem.
  std::vector<std::string> strings(const char* key);
  void string(const char* key, std::string& target);
  void boolean(const char* key, bool& target);

 private:
  std::optional<std::int64_t> integerIn(const char* key, std::int64_t min, std::int64_t max);

  const toml::table& table_;
  std::vector<std::string>& problems_;
  std::string prefix_;
};

}  // namespace vcpufold
