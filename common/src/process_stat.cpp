// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/common/process_stat.h"

#include <unistd.h>

#include "vcpufold/common/text_fields.h"

namespace vcpufold {
namespace {

constexpr std::uint64_t kPfKthread = 0x00200000;  // PF_KTHREAD, include/linux/sched.h

}  // namespace

bool ProcessStat::isKernelThread() const { return (flags & kPfKthread) != 0; }

Expected<ProcessStat> parseProcessStat(std::string_view text) {
  const auto open = text.find('(');
  const auto close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return Error{"stat: no command name in parentheses"};
  // After the name: field 3 (state) is fields[0], so field N is fields[N - 3].
  const auto fields = splitFields(text.substr(close + 1), " \n");
  if (fields.size() < 20) return Error{"stat: " + std::to_string(fields.size() + 2) + " fields, not 22 or more"};
  ProcessStat stat;
  stat.comm = std::string(text.substr(open + 1, close - open - 1));
  if (!parseDecimal(fields[6], stat.flags)) return Error{"stat: flags (field 9) is not a number"};
  if (!parseDecimal(fields[11], stat.userTicks) || !parseDecimal(fields[12], stat.systemTicks))
    return Error{"stat: utime or stime (fields 14, 15) is not a number"};
  if (!parseDecimal(fields[19], stat.startTicks)) return Error{"stat: starttime (field 22) is not a number"};
  return stat;
}

std::uint64_t nanosecondsPerClockTick() {
  static const std::uint64_t perTick = [] {
    const long hz = ::sysconf(_SC_CLK_TCK);
    return static_cast<std::uint64_t>(1'000'000'000 / (hz > 0 ? hz : 100));
  }();
  return perTick;
}

}  // namespace vcpufold
