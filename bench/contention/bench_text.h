// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Small helpers the bench's programs share: a number in a printf pattern,
// whole-file reads and writes (cgroup files, the fleet's control files, a
// child bench's CSV), counting a log's lines of one kind, a comma-separated
// option's items, today's date.

#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace vcpufold::bench {

inline std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

// Writes `text` and flushes: true when the kernel took it (a cgroup file
// refuses a bad value at the write).
inline bool writeWholeFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

// The whole file, or "" when it cannot be read.
inline std::string readWholeFile(const std::string& path) {
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// How often `needle` occurs in `text` (not overlapping).
inline unsigned countOccurrences(const std::string& text, const std::string& needle) {
  unsigned count = 0;
  if (needle.empty()) return 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++count;
  return count;
}

// "a,b,,c" -> {a, b, c}.
inline std::vector<std::string> splitCommaList(const std::string& text) {
  std::vector<std::string> items;
  std::istringstream parts(text);
  for (std::string item; std::getline(parts, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

// Today's date (UTC), YYYY-MM-DD, for a report's header.
inline std::string todayUtc() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d", std::gmtime(&now));
  return text;
}

}  // namespace vcpufold::bench
