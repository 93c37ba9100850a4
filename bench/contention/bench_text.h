#pragma once
// Small helpers the bench's programs share: a number in a printf pattern, and
// whole-file writes (cgroup files, the fleet's control files).

#include <cstdio>
#include <fstream>
#include <string>

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

}  // namespace vcpufold::bench
