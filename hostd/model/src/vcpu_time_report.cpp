// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/vcpu_time_report.h"

#include "vcpufold/common/number_text.h"

namespace vcpufold::hostd {

std::optional<std::string> describeVcpuTimeSince(const std::deque<VmSample>& recent, std::int64_t sinceNs) {
  if (recent.size() < 2) return std::nullopt;
  std::size_t from = 0;
  for (std::size_t i = 0; i + 1 < recent.size(); ++i)
    if (recent[i].monotonicNs <= sinceNs) from = i;
  const VmSample& before = recent[from];
  const VmSample& after = recent.back();
  if (after.monotonicNs <= before.monotonicNs || after.vcpus.size() != before.vcpus.size() || after.vcpus.empty())
    return std::nullopt;
  std::string ran, waited;
  for (std::size_t i = 0; i < after.vcpus.size(); ++i) {
    const VcpuCounters& a = before.vcpus[i];
    const VcpuCounters& b = after.vcpus[i];
    if (b.runNs < a.runNs || b.delayNs < a.delayNs) return std::nullopt;  // the VM restarted
    ran += (i ? "/" : "") + fixedDecimals(static_cast<double>(b.runNs - a.runNs) / 1e9, 2);
    waited += (i ? "/" : "") + fixedDecimals(static_cast<double>(b.delayNs - a.delayNs) / 1e9, 2);
  }
  const double startOffset = static_cast<double>(sinceNs - before.monotonicNs) / 1e9;
  const double endOffset = static_cast<double>(after.monotonicNs - sinceNs) / 1e9;
  std::string span = startOffset >= 0 ? "from " + fixedDecimals(startOffset, 1) + " s before the wait"
                                      : "from " + fixedDecimals(-startOffset, 1) + " s into the wait";
  span += endOffset >= 0 ? " to " + fixedDecimals(endOffset, 1) + " s into it"
                         : " to " + fixedDecimals(-endOffset, 1) + " s before it";
  return span + ", its " + std::to_string(after.vcpus.size()) + " vCPUs ran " + ran + " s and waited to run " + waited +
         " s";
}

}  // namespace vcpufold::hostd
