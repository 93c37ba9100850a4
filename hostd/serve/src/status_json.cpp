// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/status_json.h"

#include <nlohmann/json.hpp>

#include "vcpufold/hostd/agent_state.h"
#include "vcpufold/protocol/cpulist.h"

namespace vcpufold::hostd {
namespace {

using nlohmann::json;

template <typename T>
json orNull(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

}  // namespace

std::string renderStatusJson(const TickReport& report) {
  json pools = json::array();
  for (const PoolReport& pool : report.pools)
    pools.push_back({{"name", pool.name},
                     {"cpus", pool.cpus},
                     {"vms", pool.vms},
                     {"non_vm_cpus", pool.nonVmCpus},
                     {"capacity_cpus", pool.capacity},
                     {"demand_cpus", pool.demand},
                     {"contention", pool.contention},
                     {"inputs_missing", orNull(pool.inputsMissing)}});
  json vms = json::array();
  for (const VmReport& vm : report.vms) {
    const ChannelSnapshot& channel = vm.channel;
    json applied = nullptr;
    if (channel.lastAck) applied = protocol::formatCpuList(channel.lastAck->applied);
    vms.push_back({{"name", vm.record.name},
                   {"vcpus", vm.record.vcpus},
                   {"pool", vm.pool},
                   {"dedicated", vm.allocation.dedicated},
                   {"weight", vm.weight},
                   {"run_cpus", vm.load ? json(vm.load->runCpus) : json(nullptr)},
                   {"delay_ratio", vm.load ? json(vm.load->delayRatio) : json(nullptr)},
                   {"demand_cpus", vm.allocation.demand},
                   {"share_cpus", vm.allocation.share},
                   {"hint_vcpus", orNull(vm.allocation.hint)},
                   {"applied_cpus", applied},
                   {"agent_state", agentStateName(vm)},
                   {"reason", vm.allocation.reason}});
  }
  const json status = {{"tick", report.tick},
                       {"pool_cpus", report.poolCpus},
                       {"capacity_cpus", report.capacity},
                       {"demand_cpus", report.totalDemand},
                       {"contention", report.contention},
                       {"inputs_missing", orNull(report.inputsMissing)},
                       {"hints_withdrawn", report.hintsWithdrawn},
                       {"pools", pools},
                       {"vms", vms}};
  // dump() escapes control characters; VM names come from their owners.
  return status.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace vcpufold::hostd
