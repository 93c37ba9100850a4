// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/protocol/cpulist.h"

#include <cstddef>
#include <optional>


namespace vcpufold::protocol {
namespace {

Error errorAt(std::size_t offset, const std::string& what) {
  return Error{"cpulist: " + what + " at offset " + std::to_string(offset)};
}

// Reads one CPU number at text[pos], advancing pos past it.
Expected<unsigned> readCpuNumber(std::string_view text, std::size_t& pos) {
  const std::size_t start = pos;
  if (pos >= text.size() || text[pos] < '0' || text[pos] > '9') return errorAt(pos, "expected a CPU number");
  if (text[pos] == '0' && pos + 1 < text.size() && text[pos + 1] >= '0' && text[pos + 1] <= '9')
    return errorAt(pos, "leading zero");
  unsigned value = 0;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
    value = value * 10 + static_cast<unsigned>(text[pos] - '0');
    if (value >= kMaxCpus) return errorAt(start, "CPU number above the maximum " + std::to_string(kMaxCpus - 1));
    ++pos;
  }
  return value;
}

}  // namespace

Expected<CpuSet> parseCpuList(std::string_view text) {
  CpuSet cpus;
  std::optional<unsigned> previousLast;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t itemStart = pos;
    auto first = readCpuNumber(text, pos);
    if (!first) return first.error();
    unsigned last = *first;
    if (pos < text.size() && text[pos] == '-') {
      ++pos;
      auto rangeEnd = readCpuNumber(text, pos);
      if (!rangeEnd) return rangeEnd.error();
      if (*rangeEnd < *first) return errorAt(itemStart, "range end below its start");
      last = *rangeEnd;
    }
    if (previousLast && *first <= *previousLast)
      return errorAt(itemStart, "CPUs not in ascending order or overlapping");
    for (unsigned cpu = *first; cpu <= last; ++cpu) cpus.insert(cpu);
    previousLast = last;
    if (pos == text.size()) break;
    if (text[pos] != ',') return errorAt(pos, "unexpected character");
    ++pos;
    if (pos == text.size()) return errorAt(pos, "trailing comma");
  }
  return cpus;
}

Expected<CpuSet> parseCpuListFile(std::string_view contents) {
  if (!contents.empty() && contents.back() == '\n') contents.remove_suffix(1);
  return parseCpuList(contents);
}

std::string formatCpuList(const CpuSet& cpus) {
  std::string text;
  const auto list = cpus.toVector();
  for (std::size_t i = 0; i < list.size();) {
    std::size_t j = i;
    while (j + 1 < list.size() && list[j + 1] == list[j] + 1) ++j;
    if (!text.empty()) text += ',';
    text += std::to_string(list[i]);
    if (j > i) text += '-' + std::to_string(list[j]);
    i = j + 1;
  }
  return text;
}

}  // namespace vcpufold::protocol
