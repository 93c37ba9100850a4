#include "vcpufold/hostd/tick.h"

#include "vcpufold/hostd/cpu_pool.h"

namespace vcpufold::hostd {

double effectiveWeight(const VmRecord& vm, bool cgroupV2) {
  if (vm.policy.weight) return *vm.policy.weight;
  if (vm.cgroupWeight && *vm.cgroupWeight > 0) return cgroupV2 ? *vm.cgroupWeight : *vm.cgroupWeight * 100.0 / 1024.0;
  return 100.0;
}

TickReport decideTick(const AllocationConfig& config, const TickInputs& inputs,
                      std::map<std::string, HintState>& hintState, std::uint64_t tick) {
  TickReport report;
  report.tick = tick;
  report.poolCpus = inputs.poolCpus;
  report.poolSource = inputs.poolSource;
  report.reserveCpus = inputs.reserveCpus;

  std::vector<VmDemand> demands;
  for (const VmRecord& vm : inputs.vms) {
    VmReport row;
    row.record = vm;
    row.weight = effectiveWeight(vm, inputs.cgroupV2);
    if (const auto channel = inputs.channels.find(vm.name); channel != inputs.channels.end())
      row.channel = channel->second;
    const auto now = inputs.samples.find(vm.name);
    const auto before = inputs.previousSamples.find(vm.name);
    if (now != inputs.samples.end() && before != inputs.previousSamples.end())
      row.load = deriveLoad(before->second, now->second);
    if (row.load) report.vmRunCpus += row.load->runCpus;

    VmDemand demand;
    demand.name = vm.name;
    demand.vcpus = std::max<std::uint32_t>(vm.vcpus, 1);
    demand.observedDemand = row.load ? row.load->demandCpus : 0.0;
    if (row.channel.lastStatus) demand.reportedDemand = row.channel.lastStatus->demand;
    demand.weight = row.weight;
    demand.policy = vm.policy;
    demand.cooperative = row.channel.cooperative;
    if (row.channel.agentHello && row.channel.agentHello->agent)
      demand.threadsPerCore = row.channel.agentHello->agent->threadsPerCore;
    demands.push_back(demand);
    report.vms.push_back(std::move(row));
  }
  report.hostBusyCpus = inputs.hostBusyCpus.value_or(report.vmRunCpus);
  // Non-VM load (host services, QEMU's own threads) shrinks the VMs' capacity
  // only once it has lasted two ticks: a one-tick spike would fold VMs at once
  // and unfold them ticks later.
  report.measuredNonVmCpus = std::max(report.hostBusyCpus - report.vmRunCpus, 0.0);
  report.nonVmCpus = inputs.previousNonVmCpus ? std::min(report.measuredNonVmCpus, *inputs.previousNonVmCpus)
                                              : report.measuredNonVmCpus;
  report.capacity =
      vmCapacity({inputs.poolCpus, inputs.reserveCpus, report.vmRunCpus + report.nonVmCpus, report.vmRunCpus});

  const Allocation allocation = allocate(config, report.capacity, demands, hintState);
  report.totalDemand = allocation.totalDemand;
  report.contention = allocation.contention;
  std::map<std::string, HintState> next;
  for (std::size_t i = 0; i < allocation.vms.size(); ++i) {
    report.vms[i].allocation = allocation.vms[i];
    if (allocation.vms[i].hint) next[allocation.vms[i].name] = allocation.vms[i].state;
  }
  hintState = std::move(next);
  return report;
}

}  // namespace vcpufold::hostd
