// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/status_table.h"

#include <vector>

#include "vcpufold/common/log_text.h"
#include "vcpufold/common/number_text.h"
#include "vcpufold/protocol/cpulist.h"

namespace vcpufold::hostd {
namespace {

std::string agentColumn(const ChannelSnapshot& channel, FoldMode mode) {
  if (channel.state == ChannelState::Ready) {
    if (!channel.cooperative) return "no-acks";
    // Under policy auto its agent acknowledges with all CPUs: not folded, by
    // its guest kernel class (one word: scripts split the table on blanks).
    const bool declines = channel.agentHello && channel.agentHello->agent && !channel.agentHello->agent->foldsOnAutoHints;
    return declines && mode == FoldMode::Auto ? "not-folded:guest-kernel" : "ready";
  }
  if (channel.state == ChannelState::Idle) return "-";  // not connected yet (or --oneshot)
  return channelStateName(channel.state);
}

}  // namespace

std::string renderStatusTable(const TickReport& report, bool withReasons) {
  std::vector<std::vector<std::string>> rows{
      {"VM", "VCPUS", "POOL", "POLICY", "AGENT", "DEMAND", "DELAY", "WEIGHT", "SHARE", "HINT", "APPLIED", "CONTROL"}};
  for (const auto& vm : report.vms) {
    const auto& channel = vm.channel;
    std::string policy = foldModeName(vm.record.policy.mode);
    if (vm.record.policyError) policy += "!";
    rows.push_back(
        {escapeForLog(vm.record.name, 128), std::to_string(vm.record.vcpus),
         vm.pool.empty() ? "-" : vm.pool + (vm.allocation.dedicated ? " (dedicated)" : ""), policy,
         vm.record.channelSocket ? agentColumn(channel, vm.record.policy.mode) : "no-channel", fixedDecimals(vm.allocation.demand, 2),
         vm.load ? fixedDecimals(100 * vm.load->delayRatio, 0) + "%" : "-", fixedDecimals(vm.weight, 0),
         fixedDecimals(vm.allocation.share, 2), vm.allocation.hint ? std::to_string(*vm.allocation.hint) : "-",
         channel.lastAck ? protocol::formatCpuList(channel.lastAck->applied) : "-",
         channel.lastStatus ? protocol::controlName(channel.lastStatus->control) : "-"});
  }
  std::vector<std::size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  std::string text = "pool " + fixedDecimals(report.poolCpus, 0) + " CPUs (" + report.poolSource + "), reserve " +
                     fixedDecimals(report.reserveCpus, 2) + ", non-VM load " + fixedDecimals(report.nonVmCpus, 2) +
                     ", capacity " + fixedDecimals(report.capacity, 2) + ", demand " +
                     fixedDecimals(report.totalDemand, 2) + (report.contention ? ": contention" : ": no contention") +
                     (report.isolatedCpus.empty() ? "" : "; isolated " + protocol::formatCpuList(report.isolatedCpus)) +
                     "\n";
  // Each pool on its own line when there are several (VMs pinned apart).
  if (report.pools.size() > 1)
    for (const PoolReport& pool : report.pools)
      text += "  pool " + pool.name + ": " + std::to_string(pool.cpus) + " CPUs, " + std::to_string(pool.vms) + " VMs" +
              (pool.dedicatedVms ? " (" + std::to_string(pool.dedicatedVms) + " dedicated)" : "") + ", non-VM load " +
              fixedDecimals(pool.nonVmCpus, 2) + ", capacity " + fixedDecimals(pool.capacity, 2) + ", demand " +
              fixedDecimals(pool.demand, 2) + (pool.contention ? ": contention" : ": no contention") + "\n";
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    text += line + "\n";
  }
  if (withReasons) {
    for (const auto& vm : report.vms) {
      // Names and metadata come from VM owners: escaped, one line per VM whatever they hold.
      text += escapeForLog(vm.record.name, 128) + ": " + escapeForLog(vm.allocation.reason, 1024);
      // Which of the VM's metadata, its [[vm]] table, a fleet rule or the default gave it its policy.
      text += " [policy: " +
              (vm.record.policySource == PolicySource::Rule ? escapeForLog(vm.record.policyRule)
                                                            : std::string(policySourceName(vm.record.policySource))) +
              "]";
      if (vm.record.policyError) text += " [policy metadata refused: " + escapeForLog(*vm.record.policyError) + "]";
      if (vm.record.channelProblem) text += " [channel: " + escapeForLog(*vm.record.channelProblem) + "]";
      text += "\n";
    }
  }
  return text;
}

}  // namespace vcpufold::hostd
