// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/common/proc_loadavg.h"

#include <limits>
#include <string>

#include "vcpufold/common/system_paths.h"
#include "vcpufold/common/text_fields.h"

namespace vcpufold {

Expected<std::uint32_t> parseLoadavgRunning(std::string_view text) {
  const auto problem = [](const std::string& what) {
    return Error{std::string(paths::kProcLoadavg) + ": " + what};
  };
  if (text.ends_with('\n')) text.remove_suffix(1);
  const auto fields = splitFields(text);
  if (fields.size() != 5) return problem("not five fields");
  const std::string_view tasks = fields[3];
  const auto slash = tasks.find('/');
  if (slash == std::string_view::npos) return problem("no RUNNING/THREADS field");
  std::uint64_t running = 0;
  std::uint64_t threads = 0;
  if (!parseDecimal(tasks.substr(0, slash), running) || !parseDecimal(tasks.substr(slash + 1), threads))
    return problem("malformed RUNNING/THREADS field");
  if (running > std::numeric_limits<std::uint32_t>::max()) return problem("running count out of range");
  return static_cast<std::uint32_t>(running);
}

}  // namespace vcpufold
