// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/common/toml_reader.h"

#include <cmath>
#include <sstream>

namespace vcpufold {

namespace {

// 0.5, 3600: as written in a file, without trailing zeros.
std::string shortNumber(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

}  // namespace

TomlReader::TomlReader(const toml::table& table, std::vector<std::string>& problems, std::string prefix)
    : table_(table), problems_(problems), prefix_(std::move(prefix)) {}

bool TomlReader::has(const char* key) const { return static_cast<bool>(table_.at_path(key)); }

void TomlReader::rejectUnknownKeys(const std::set<std::string>& known, const std::set<std::string>& skipped) {
  for (const auto& [key, node] : table_) {
    const std::string name(key.str());
    if (skipped.count(name)) continue;
    const auto* section = node.as_table();
    if (!section) {
      if (!known.count(name)) problems_.push_back(prefix_ + name + ": unknown key");
      continue;
    }
    for (const auto& [subKey, subNode] : *section) {
      const std::string path = name + "." + std::string(subKey.str());
      if (!known.count(path)) problems_.push_back(prefix_ + path + ": unknown key");
    }
  }
}

std::optional<std::int64_t> TomlReader::integerIn(const char* key, std::int64_t min, std::int64_t max) {
  const auto node = table_.at_path(key);
  if (!node) return std::nullopt;
  // Only an integer node is read as one: toml++ would convert a float, and
  // 25e20 does not fit (undefined behaviour, found by fuzzing).
  const auto value = node.is_integer() ? node.value<std::int64_t>() : std::nullopt;
  if (!value || *value < min || *value > max) {
    problems_.push_back(prefix_ + key + ": expected an integer " + std::to_string(min) + ".." + std::to_string(max));
    return std::nullopt;
  }
  return value;
}

void TomlReader::unsignedInteger(const char* key, std::uint32_t& target, std::uint32_t max) {
  if (const auto value = integerIn(key, 0, max)) target = static_cast<std::uint32_t>(*value);
}

void TomlReader::optionalUnsigned(const char* key, std::optional<std::uint32_t>& target) {
  if (const auto value = integerIn(key, 0, UINT32_MAX)) target = static_cast<std::uint32_t>(*value);
}

void TomlReader::signedInteger(const char* key, int& target, int min, int max) {
  if (const auto value = integerIn(key, min, max)) target = static_cast<int>(*value);
}

void TomlReader::unsignedIntegerIn(const char* key, std::uint32_t& target, std::uint32_t min, std::uint32_t max) {
  if (const auto value = integerIn(key, min, max)) target = static_cast<std::uint32_t>(*value);
}

void TomlReader::numberIn(const char* key, double& target, double min, double max) {
  double value = target;
  const std::size_t before = problems_.size();
  number(key, value);
  if (problems_.size() != before || !has(key)) return;
  if (!std::isfinite(value) || value < min || value > max)
    problems_.push_back(prefix_ + key + ": expected a number " + shortNumber(min) + ".." + shortNumber(max));
  else
    target = value;
}

const toml::array* TomlReader::array(const char* key) {
  const auto node = table_.at_path(key);
  if (!node) return nullptr;
  if (!node.is_array()) problems_.push_back(prefix_ + key + ": expected an array");
  return node.as_array();
}

std::vector<std::string> TomlReader::strings(const char* key) {
  std::vector<std::string> values;
  const toml::array* elements = array(key);
  if (!elements) return values;
  for (const auto& element : *elements) {
    if (auto text = element.value<std::string>())
      values.push_back(*text);
    else
      problems_.push_back(prefix_ + key + ": expected an array of strings");
  }
  return values;
}

void TomlReader::number(const char* key, double& target) {
  const auto node = table_.at_path(key);
  if (!node) return;
  if (!node.is_number())
    problems_.push_back(prefix_ + key + ": expected a number");
  else
    target = *node.value<double>();
}

void TomlReader::string(const char* key, std::string& target) {
  const auto node = table_.at_path(key);
  if (!node) return;
  if (!node.is_string())
    problems_.push_back(prefix_ + key + ": expected a string");
  else
    target = *node.value<std::string>();
}

void TomlReader::boolean(const char* key, bool& target) {
  const auto node = table_.at_path(key);
  if (!node) return;
  if (!node.is_boolean())
    problems_.push_back(prefix_ + key + ": expected true or false");
  else
    target = *node.value<bool>();
}

}  // namespace vcpufold
