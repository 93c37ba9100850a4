// decideTick: how the host's non-VM load enters the VMs' capacity.

#include "vcpufold/hostd/tick.h"

#include <gtest/gtest.h>

namespace vcpufold::hostd {
namespace {

// Two cooperative 4-vCPU VMs, every vCPU wanting to run all of a 1 s tick and
// running `runShare` of it, on a pool of `pool` CPUs.
TickInputs contendedPool(double pool, double runShare) {
  TickInputs inputs;
  inputs.poolCpus = pool;
  for (const char* name : {"vm1", "vm2"}) {
    VmRecord vm;
    vm.name = name;
    vm.vcpus = 4;
    inputs.vms.push_back(vm);
    VmSample before, after;
    after.monotonicNs = 1'000'000'000;
    const auto run = static_cast<std::uint64_t>(runShare * 1e9);
    before.vcpus.assign(4, VcpuCounters{});
    after.vcpus.assign(4, VcpuCounters{run, 1'000'000'000 - run});
    inputs.previousSamples[name] = before;
    inputs.samples[name] = after;
    ChannelSnapshot channel;
    channel.cooperative = true;
    inputs.channels[name] = channel;
  }
  return inputs;
}

TEST(DecideTick, AOneTickSpikeOfNonVmLoadLeavesTheCapacity) {
  TickInputs inputs = contendedPool(4, 0.25);  // the VMs run 2 CPUs
  inputs.hostBusyCpus = 4.0;                   // 2 CPUs of something else, this tick only
  inputs.previousNonVmCpus = 0.0;
  std::map<std::string, HintState> state;
  const TickReport report = decideTick({}, inputs, state, 2);
  EXPECT_DOUBLE_EQ(report.measuredNonVmCpus, 2.0);
  EXPECT_DOUBLE_EQ(report.nonVmCpus, 0.0);
  EXPECT_DOUBLE_EQ(report.capacity, 4.0);
  for (const auto& vm : report.vms) EXPECT_EQ(vm.allocation.hint, 2u) << vm.record.name;
}

TEST(DecideTick, NonVmLoadThatLastsTwoTicksShrinksTheCapacity) {
  TickInputs inputs = contendedPool(4, 0.25);
  inputs.hostBusyCpus = 4.0;
  inputs.previousNonVmCpus = 2.0;  // it was there last tick too
  std::map<std::string, HintState> state;
  const TickReport report = decideTick({}, inputs, state, 3);
  EXPECT_DOUBLE_EQ(report.nonVmCpus, 2.0);
  EXPECT_DOUBLE_EQ(report.capacity, 2.0);
  for (const auto& vm : report.vms) EXPECT_EQ(vm.allocation.hint, 1u) << vm.record.name;
}

TEST(DecideTick, CountsTheSmallerOfTwoTicksNonVmLoad) {
  TickInputs inputs = contendedPool(4, 0.25);
  inputs.hostBusyCpus = 3.0;       // 1 CPU of other load now
  inputs.previousNonVmCpus = 1.5;  // 1.5 last tick
  std::map<std::string, HintState> state;
  const TickReport report = decideTick({}, inputs, state, 3);
  EXPECT_DOUBLE_EQ(report.measuredNonVmCpus, 1.0);
  EXPECT_DOUBLE_EQ(report.nonVmCpus, 1.0);
  EXPECT_DOUBLE_EQ(report.capacity, 3.0);
}

TEST(DecideTick, WithoutALastTickTheLoadCountsAsMeasured) {
  TickInputs inputs = contendedPool(4, 0.25);
  inputs.hostBusyCpus = 4.0;
  std::map<std::string, HintState> state;
  const TickReport report = decideTick({}, inputs, state, 1);
  EXPECT_DOUBLE_EQ(report.nonVmCpus, 2.0);
  EXPECT_DOUBLE_EQ(report.capacity, 2.0);
}

}  // namespace
}  // namespace vcpufold::hostd
