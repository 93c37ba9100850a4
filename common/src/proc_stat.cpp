// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/common/proc_stat.h"

#include <algorithm>
#include <string>
#include <vector>

#include "vcpufold/common/system_paths.h"
#include "vcpufold/common/text_fields.h"

namespace vcpufold {
namespace {

// Above any kernel's NR_CPUS: a larger number is garbage, not a CPU.
constexpr std::uint64_t kCpuNumberLimit = 65536;

Error problem(const std::string& what) { return Error{std::string(paths::kProcStat) + ": " + what}; }

// user nice system idle iowait irq softirq steal [guest guest_nice]
Expected<CpuTicks> parseTicks(const std::vector<std::string_view>& words, const std::string& name) {
  if (words.size() < 9) return problem("short line for " + name);
  std::uint64_t values[8] = {};
  CpuTicks ticks;
  for (std::size_t i = 0; i < 8; ++i) {
    if (!parseDecimal(words[i + 1], values[i])) return problem("malformed value in " + name);
    if (ticks.total > UINT64_MAX - values[i]) return problem(name + " overflows");
    ticks.total += values[i];
  }
  ticks.busy = ticks.total - values[3] - values[4];
  ticks.steal = values[7];
  return ticks;
}

}  // namespace

Expected<ProcStat> parseProcStat(std::string_view text) {
  ProcStat stat;
  bool sawCpu = false;
  bool sawProcsRunning = false;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    const auto words = splitFields(line);
    if (words.empty()) continue;
    const std::string_view key = words[0];
    if (key == "cpu") {
      auto ticks = parseTicks(words, "the cpu line");
      if (!ticks) return ticks.error();
      stat.all = *ticks;
      sawCpu = true;
    } else if (key.size() > 3 && key.substr(0, 3) == "cpu") {
      std::uint64_t cpu = 0;
      if (!parseDecimal(key.substr(3), cpu) || cpu >= kCpuNumberLimit)
        return problem("malformed line \"" + std::string(key) + "\"");
      auto ticks = parseTicks(words, std::string(key));
      if (!ticks) return ticks.error();
      stat.perCpu[static_cast<unsigned>(cpu)] = *ticks;
    } else if (key == "procs_running") {
      std::uint64_t running = 0;
      if (words.size() < 2 || !parseDecimal(words[1], running)) return problem("malformed procs_running");
      stat.procsRunning = static_cast<std::uint32_t>(std::min<std::uint64_t>(running, UINT32_MAX));
      sawProcsRunning = true;
    }
  }
  if (!sawCpu) return problem("no cpu line");
  if (stat.perCpu.empty()) return problem("no per-CPU lines");
  if (!sawProcsRunning) return problem("no procs_running line");
  return stat;
}

}  // namespace vcpufold
