#include "vcpufold/agent/proc_stat.h"

#include <charconv>
#include <string>

#include "vcpufold/common/system_paths.h"

namespace vcpufold::agent {
namespace {

// Splits off the next whitespace-separated word of text.
std::string_view nextWord(std::string_view& text) {
  const auto start = text.find_first_not_of(' ');
  if (start == std::string_view::npos) {
    text = {};
    return {};
  }
  text.remove_prefix(start);
  const auto end = text.find(' ');
  const std::string_view word = text.substr(0, end);
  text.remove_prefix(end == std::string_view::npos ? text.size() : end);
  return word;
}

bool parseUnsigned(std::string_view word, std::uint64_t& value) {
  const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
  return error == std::errc() && end == word.data() + word.size() && !word.empty();
}

}  // namespace

Expected<ProcStatSample> parseProcStat(std::string_view text) {
  ProcStatSample sample;
  bool sawCpu = false;
  bool sawProcsRunning = false;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    const std::string_view key = nextWord(line);
    if (key == "cpu") {
      // user nice system idle iowait irq softirq steal [guest guest_nice]
      std::uint64_t values[8] = {};
      for (auto& value : values)
        if (!parseUnsigned(nextWord(line), value)) return Error{std::string(paths::kProcStat) + ": malformed cpu line"};
      sample.stealTicks = values[7];
      sawCpu = true;
    } else if (key.size() > 3 && key.substr(0, 3) == "cpu") {
      ++sample.cpusReporting;
    } else if (key == "procs_running") {
      std::uint64_t running = 0;
      if (!parseUnsigned(nextWord(line), running))
        return Error{std::string(paths::kProcStat) + ": malformed procs_running"};
      sample.procsRunning = static_cast<std::uint32_t>(std::min<std::uint64_t>(running, UINT32_MAX));
      sawProcsRunning = true;
    }
  }
  if (!sawCpu) return Error{std::string(paths::kProcStat) + ": no cpu line"};
  if (!sawProcsRunning) return Error{std::string(paths::kProcStat) + ": no procs_running line"};
  if (sample.cpusReporting == 0) return Error{std::string(paths::kProcStat) + ": no per-CPU lines"};
  return sample;
}

}  // namespace vcpufold::agent
