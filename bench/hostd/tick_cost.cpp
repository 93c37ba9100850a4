// SPDX-License-Identifier: GPL-2.0-or-later
// Measures hostd's CPU cost per tick at fleet scale with a synthetic
// inventory: N VMs x V vCPUs (default 1000 x 8), a third of them contended,
// agents' status reports, hint state carried from tick to tick. A tick is
// what the daemon does every interval between its I/O: derive every VM's
// load from two samples, decide (allocation), encode every VM's hint as a
// wire frame. Rendering the metrics page and the status table happens only
// when they are requested (a scrape, `vcpufold-hostd status`); it is measured
// and printed apart. Libvirt's RPC time and socket writes are I/O, not
// hostd's CPU, and are not included.
// After every tick, one event decision: one VM's agent reports a changed
// demand, and hostd decides again on the tick's samples (reviseDecision on
// a copy of the channels, as the daemon's DecisionMemory does) and encodes
// the hints that changed (only those are sent). Then a flood: 100
// guests swinging their reports as fast as they can, through the per-VM
// budget and the debounce of decisions between ticks, each granted decision
// a revision like the single event's.
// Usage: vcpufold-bench-tick-cost [VMS=1000] [VCPUS=8] [TICKS=50]

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "vcpufold/common/daemon_support.h"
#include "vcpufold/hostd/decision_memory.h"
#include "vcpufold/hostd/metrics.h"
#include "vcpufold/hostd/status_table.h"
#include "vcpufold/hostd/tick.h"
#include "vcpufold/protocol/codec.h"

using namespace vcpufold::hostd;

namespace {

double cpuSeconds() {
  timespec now{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  vcpufold::keepLargeBlocksAllocated();  // as vcpufold-hostd does
  const int vms = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int vcpus = argc > 2 ? std::atoi(argv[2]) : 8;
  const int ticks = argc > 3 ? std::atoi(argv[3]) : 50;
  std::mt19937_64 random(1);
  std::uniform_real_distribution<double> unit(0.0, 1.0);

  TickInputs inputs;
  inputs.poolCpus = vms * vcpus / 3.0;  // 3:1 overcommit
  inputs.poolSource = "synthetic";
  inputs.hostBusyCpus = inputs.poolCpus * 0.95;
  std::vector<std::vector<VcpuCounters>> counters(static_cast<std::size_t>(vms),
                                                  std::vector<VcpuCounters>(static_cast<std::size_t>(vcpus)));
  for (int i = 0; i < vms; ++i) {
    VmRecord record;
    record.name = "vm-" + std::to_string(i);
    record.vcpus = static_cast<std::uint32_t>(vcpus);
    record.channelSocket = "/var/lib/libvirt/qemu/channel/target/domain-" + std::to_string(i) + "/org.vcpufold.hint.0";
    record.cgroupWeight = 100;
    inputs.vms.push_back(record);
    ChannelSnapshot channel;
    channel.state = ChannelState::Ready;
    channel.cooperative = i % 10 != 0;
    channel.lastStatus = vcpufold::protocol::Status{
        unit(random) * vcpus, 300, 1000, vcpufold::protocol::CpuSet::range(0, 1), vcpufold::protocol::Control::Host};
    inputs.channels[record.name] = channel;
  }
  HintStates state;
  TickDurationHistogram histogram;
  std::vector<double> costs;
  std::vector<double> renderCosts;
  std::vector<double> eventCosts;
  std::size_t eventHintsChanged = 0;
  std::size_t bytes = 0;
  std::size_t renderedBytes = 0;
  for (int tick = 0; tick <= ticks; ++tick) {
    // New counters for this tick (the synthetic "sample"): busy VMs want all vCPUs.
    inputs.previousSamples = std::move(inputs.samples);
    inputs.samples.clear();
    for (int i = 0; i < vms; ++i) {
      const double busy = i % 3 == 0 ? 1.0 : unit(random);
      for (auto& vcpu : counters[static_cast<std::size_t>(i)]) {
        vcpu.runNs += static_cast<std::uint64_t>(busy * 4e8);
        vcpu.delayNs += static_cast<std::uint64_t>(busy * 6e8);
      }
      inputs.samples[inputs.vms[static_cast<std::size_t>(i)].name] =
          VmSample{counters[static_cast<std::size_t>(i)], static_cast<std::int64_t>(tick) * 1'000'000'000, std::nullopt};
    }
    const auto tickAt = std::chrono::steady_clock::time_point{} + std::chrono::seconds(tick);
    inputs.now = tickAt;
    inputs.windowStartedAt = tickAt - std::chrono::seconds(1);
    const double start = cpuSeconds();
    TickReport report = decideTick(AllocationConfig{}, inputs, state, static_cast<std::uint64_t>(tick));
    state = report.hintState;
    std::uint64_t seq = static_cast<std::uint64_t>(tick) * static_cast<std::uint64_t>(vms);
    for (const auto& vm : report.vms) {
      if (!vm.hint) continue;
      vcpufold::protocol::Hint hint = *vm.hint;
      hint.seq = ++seq;
      auto line = vcpufold::protocol::encodeMessage(hint, 1);
      bytes += line ? line->size() : 0;
    }
    const double cost = cpuSeconds() - start;
    const std::string metrics = renderMetrics(report, histogram);
    const std::string status = renderStatusTable(report, true);
    const double renderCost = cpuSeconds() - start - cost;
    histogram.observe(cost);
    if (tick > 0) {  // the first tick has no previous sample
      costs.push_back(cost);
      renderCosts.push_back(renderCost);
    }
    renderedBytes += metrics.size() + status.size();

    // An event: one VM's demand report moves (newer than the samples), 300 ms into the tick.
    const auto& moved = inputs.vms[static_cast<std::size_t>(tick) % inputs.vms.size()].name;
    auto& channel = inputs.channels[moved];
    channel.lastStatus->demand = channel.lastStatus->demand >= 1 ? 0.0 : static_cast<double>(vcpus);
    channel.lastStatusAt = tickAt + std::chrono::milliseconds(250);
    channel.lastDemandChangeAt = channel.lastStatusAt;
    inputs.now = tickAt + std::chrono::milliseconds(300);
    std::vector<std::optional<std::uint32_t>> hintsBefore;
    for (const auto& vm : report.vms) hintsBefore.push_back(vm.allocation.hint);
    const double eventStart = cpuSeconds();
    // What DecisionMemory::decideOnEvent does with the channels the daemon
    // copies from its sessions: the tick's rows revised, not rebuilt.
    inputs.channels = ChannelSnapshots(inputs.channels);
    const TickReport event =
        reviseDecision(AllocationConfig{}, std::move(report), inputs, state, static_cast<std::uint64_t>(tick));
    state = event.hintState;
    for (std::size_t i = 0; i < event.vms.size(); ++i) {
      if (event.vms[i].allocation.hint == hintsBefore[i] || !event.vms[i].hint) continue;
      ++eventHintsChanged;
      vcpufold::protocol::Hint hint = *event.vms[i].hint;
      hint.seq = ++seq;
      auto line = vcpufold::protocol::encodeMessage(hint, 1);
      bytes += line ? line->size() : 0;
    }
    if (tick > 0) eventCosts.push_back(cpuSeconds() - eventStart);
  }
  std::sort(eventCosts.begin(), eventCosts.end());
  std::sort(costs.begin(), costs.end());
  std::sort(renderCosts.begin(), renderCosts.end());
  const double median = costs[costs.size() / 2] * 1000;
  const double p95 = costs[costs.size() * 95 / 100] * 1000;
  std::printf(
      "hostd tick cost, %d VMs x %d vCPUs, %d ticks: median %.2f ms CPU, p95 %.2f ms, max %.2f ms "
      "(target: under 20 ms); %.0f bytes of hints and %.0f of metrics and status a tick\n",
      vms, vcpus, ticks, median, p95, costs.back() * 1000, static_cast<double>(bytes) / (ticks + 1),
      static_cast<double>(renderedBytes) / (ticks + 1));
  std::printf(
      "event decision (one VM's demand report moved): median %.2f ms CPU, p95 %.2f ms, max %.2f ms "
      "(target: p95 under 1 ms, max under 5 ms); %.1f hints changed each\n",
      eventCosts[eventCosts.size() / 2] * 1000, eventCosts[eventCosts.size() * 95 / 100] * 1000,
      eventCosts.back() * 1000, static_cast<double>(eventHintsChanged) / ticks);
  std::printf("on request: metrics page and status table together, median %.2f ms CPU\n",
              renderCosts[renderCosts.size() / 2] * 1000);

  // A flood: 100 guests swing their reported demand between 0 and all their
  // vCPUs every 10 ms for 10 s. Each swing asks for a decision between ticks;
  // the control thread grants each VM kEventDecisionsPerVm per
  // kEventDecisionWindow (DecisionMemory) and joins requests within its 30 ms
  // debounce, and every granted decision revises the whole fleet's.
  constexpr int kFlooders = 100;
  constexpr auto kDebounce = std::chrono::milliseconds(30);
  DecisionMemory budgets;
  const auto floodStart = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  bool pending = false;  // a decision asked for, due at pendingAt
  auto pendingAt = floodStart;
  std::vector<double> floodCosts;
  std::size_t asked = 0, granted = 0;
  // The decision the flood's decisions revise: one on the last tick's samples.
  TickReport latest = decideTick(AllocationConfig{}, inputs, state, 0);
  state = latest.hintState;
  const auto decide = [&](std::chrono::steady_clock::time_point at) {
    inputs.now = at;
    const double begin = cpuSeconds();
    inputs.channels = ChannelSnapshots(inputs.channels);
    latest = reviseDecision(AllocationConfig{}, std::move(latest), inputs, state, 0);
    state = latest.hintState;
    floodCosts.push_back(cpuSeconds() - begin);
  };
  for (int step = 0; step < 1000; ++step) {
    const auto at = floodStart + std::chrono::milliseconds(10 * step);
    if (pending && pendingAt <= at) {
      decide(pendingAt);
      pending = false;
    }
    for (int i = 0; i < std::min(kFlooders, vms); ++i) {
      const auto& name = inputs.vms[static_cast<std::size_t>(i)].name;
      auto& channel = inputs.channels[name];
      channel.lastStatus->demand = step % 2 ? 0.0 : static_cast<double>(vcpus);
      channel.lastStatusAt = at;
      channel.lastDemandChangeAt = at;
      ++asked;
      if (!budgets.allowEventDecisionFor(name, at)) continue;
      ++granted;
      if (!pending) {
        pending = true;
        pendingAt = at + kDebounce;
      }
    }
  }
  double floodTotal = 0;
  for (double cost : floodCosts) floodTotal += cost;
  std::sort(floodCosts.begin(), floodCosts.end());
  std::printf(
      "%d guests swinging their reports every 10 ms for 10 s: %zu asked for a decision, %zu within their "
      "budgets, %zu decisions taken (%.1f a second), %.1f ms CPU a second (%.1f%% of one CPU), the longest "
      "%.2f ms: what a tick can wait behind\n",
      std::min(kFlooders, vms), asked, granted, floodCosts.size(), static_cast<double>(floodCosts.size()) / 10.0,
      floodTotal * 1000 / 10.0, floodTotal * 100 / 10.0, floodCosts.empty() ? 0.0 : floodCosts.back() * 1000);
  return 0;
}
