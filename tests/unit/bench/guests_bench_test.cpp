// SPDX-License-Identifier: GPL-2.0-or-later
// The real-guest bench's plan and report (bench/guests): the order of the
// runs, the fixed mode's size, the measured unit, the emulated results read
// back, and the targets judged from the samples.

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <utility>

#include "guests_plan.h"
#include "guests_report.h"

using namespace vcpufold::bench;

TEST(GuestsPlan, FixedSizeIsTheEqualShareRoundedUpWithinTheGuest) {
  EXPECT_EQ(fixedShareVcpus(2, 3, 4), 1U);   // 0.67 -> 1
  EXPECT_EQ(fixedShareVcpus(2, 2, 4), 1U);   // exactly 1
  EXPECT_EQ(fixedShareVcpus(4, 3, 4), 2U);   // 1.33 -> 2
  EXPECT_EQ(fixedShareVcpus(16, 2, 4), 4U);  // never above the guest's vCPUs
  EXPECT_EQ(fixedShareVcpus(1, 8, 4), 1U);   // never below one
}

TEST(GuestsPlan, EveryModeOfAWorkloadRunsBackToBackInEveryRepetition) {
  const auto plan = interleavedPlan(2, {"hackbench-pipe", "compute"});
  ASSERT_EQ(plan.size(), 2U * 2U * 3U);
  for (std::size_t cell = 0; cell < 4; ++cell) {
    std::set<GuestMode> modes;
    for (std::size_t i = cell * 3; i < cell * 3 + 3; ++i) {
      EXPECT_EQ(plan[i].repetition, cell / 2 + 1) << i;
      EXPECT_EQ(plan[i].workload, cell % 2 == 0 ? "hackbench-pipe" : "compute") << i;
      modes.insert(plan[i].mode);
    }
    EXPECT_EQ(modes.size(), 3U) << "cell " << cell;
  }
}

TEST(GuestsPlan, EveryModeRunsInEveryPlaceAndAfterEveryOtherModeAlike) {
  // Six cells (3 repetitions of 2 workloads): a fixed order would put
  // unfolded first six times and vcpufold after unfolded six times.
  const auto plan = interleavedPlan(3, {"hackbench-pipe", "compute"});
  ASSERT_EQ(plan.size(), 18U);
  std::map<std::pair<GuestMode, std::size_t>, int> place;
  std::map<std::pair<GuestMode, GuestMode>, int> after;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    ++place[{plan[i].mode, i % 3}];
    if (i % 3 != 0) ++after[{plan[i - 1].mode, plan[i].mode}];
  }
  for (const GuestMode mode : kGuestModes)
    for (std::size_t position = 0; position < 3; ++position)
      EXPECT_EQ((place[{mode, position}]), 2) << guestModeName(mode) << " at " << position;
  for (const GuestMode before : kGuestModes)
    for (const GuestMode mode : kGuestModes)
      if (before != mode) {
        EXPECT_EQ((after[{before, mode}]), 2) << guestModeName(mode) << " after " << guestModeName(before);
      }
}

TEST(GuestsPlan, ModesAndWorkloadsAreKnownByName) {
  for (const GuestMode mode : kGuestModes) EXPECT_EQ(parseGuestMode(guestModeName(mode)), mode);
  EXPECT_FALSE(parseGuestMode("steal-law"));
  for (const auto& workload : guestWorkloads()) {
    EXPECT_EQ(findGuestWorkload(workload.name), &workload);
    EXPECT_GT(workload.size, 0U);
    EXPECT_TRUE(workload.emulated == "message" || workload.emulated == "spinlock" || workload.emulated == "compute")
        << workload.emulated;
  }
  EXPECT_EQ(findGuestWorkload("kernel-build"), nullptr);
  // The fold without vcpufold is compared with compute's modes: the same unit.
  ASSERT_NE(findGuestWorkload("compute-folded"), nullptr);
  EXPECT_EQ(findGuestWorkload("compute-folded")->size, findGuestWorkload("compute")->size);
  ASSERT_NE(findGuestWorkload("compute-folded-2"), nullptr);
  EXPECT_EQ(findGuestWorkload("compute-folded-2")->size, findGuestWorkload("compute")->size);
}

TEST(GuestsPlan, EachActuatorNamesTheAgentsActuatorAndItsKernel) {
  ASSERT_NE(findGuestActuator("cpuset"), nullptr);
  EXPECT_EQ(findGuestActuator("cpuset")->agentActuator, "cpuset");
  EXPECT_FALSE(findGuestActuator("cpuset")->patchedKernel);
  EXPECT_TRUE(findGuestActuator("cpuset")->targeted);
  EXPECT_EQ(findGuestActuator("cpuset")->cloudKernel, "") << "the lab image's default, Debian 12's 6.1";
  // Debian's stock 6.12 cloud kernel, from its own meta package, with targets.
  ASSERT_NE(findGuestActuator("cpuset-6.12"), nullptr);
  EXPECT_EQ(findGuestActuator("cpuset-6.12")->agentActuator, "cpuset");
  EXPECT_FALSE(findGuestActuator("cpuset-6.12")->patchedKernel);
  EXPECT_TRUE(findGuestActuator("cpuset-6.12")->targeted);
  EXPECT_EQ(findGuestActuator("cpuset-6.12")->cloudKernel, "linux-image-6.12-cloud-amd64");
  ASSERT_NE(findGuestActuator("kernel"), nullptr);
  EXPECT_EQ(findGuestActuator("kernel")->agentActuator, "kernel");
  EXPECT_TRUE(findGuestActuator("kernel")->patchedKernel);
  // The cpuset actuator on the patched kernel: the kernel of one, the actuator of the other, no targets.
  ASSERT_NE(findGuestActuator("cpuset-patched"), nullptr);
  EXPECT_EQ(findGuestActuator("cpuset-patched")->agentActuator, "cpuset");
  EXPECT_TRUE(findGuestActuator("cpuset-patched")->patchedKernel);
  EXPECT_FALSE(findGuestActuator("cpuset-patched")->targeted);
  // The shipped fold default on the stock kernels: steered as shipped, no targets; the variants of the
  // targets fold on auto hints, since the bench measures folding.
  for (const char* name : {"cpuset-shipped", "cpuset-6.12-shipped"}) {
    ASSERT_NE(findGuestActuator(name), nullptr) << name;
    EXPECT_FALSE(findGuestActuator(name)->agentFoldsAlways) << name;
    EXPECT_TRUE(findGuestActuator(name)->steerHousekeeping) << name;
    EXPECT_FALSE(findGuestActuator(name)->targeted) << name;
    EXPECT_FALSE(findGuestActuator(name)->patchedKernel) << name;
  }
  EXPECT_EQ(findGuestActuator("cpuset-6.12-shipped")->cloudKernel, "linux-image-6.12-cloud-amd64");
  EXPECT_TRUE(findGuestActuator("cpuset-6.12")->agentFoldsAlways);
  // What the presence of each part costs: the shipped agent sampling once a second, and hostd without agents.
  ASSERT_NE(findGuestActuator("cpuset-shipped-sample-1s"), nullptr);
  EXPECT_EQ(findGuestActuator("cpuset-shipped-sample-1s")->agentSampleMs, 1000u);
  EXPECT_FALSE(findGuestActuator("cpuset-shipped-sample-1s")->agentFoldsAlways);
  EXPECT_TRUE(findGuestActuator("cpuset-shipped-sample-1s")->agents);
  ASSERT_NE(findGuestActuator("cpuset-hostd-only"), nullptr);
  EXPECT_FALSE(findGuestActuator("cpuset-hostd-only")->agents);
  EXPECT_FALSE(findGuestActuator("cpuset-hostd-only")->targeted);
  for (const auto& actuator : guestActuators())
    if (actuator.name != "cpuset-hostd-only")
      EXPECT_TRUE(actuator.agents) << actuator.name;
    else
      EXPECT_EQ(actuator.cloudKernel, "") << "stock 6.1, as cpuset-shipped";
  EXPECT_EQ(findGuestActuator("cpuset")->agentSampleMs, 0u);
}

TEST(GuestsPlan, EachVariantStartsItsAgentsWithItsOptions) {
  EXPECT_EQ(agentStartCommand(*findGuestActuator("cpuset")), "sh /lab/agent start cpuset");
  EXPECT_EQ(agentStartCommand(*findGuestActuator("kernel")), "sh /lab/agent start kernel");
  EXPECT_EQ(agentStartCommand(*findGuestActuator("cpuset-6.12-unsteered")), "sh /lab/agent start cpuset unsteered");
  EXPECT_EQ(agentStartCommand(*findGuestActuator("cpuset-6.12-shipped")), "sh /lab/agent start cpuset shipped-fold");
  EXPECT_EQ(agentStartCommand(*findGuestActuator("cpuset-shipped-sample-1s")),
            "sh /lab/agent start cpuset shipped-fold sample-ms=1000");
  EXPECT_EQ(agentStartCommand(*findGuestActuator("cpuset-hostd-only")), "") << "hostd alone starts no agent";
  EXPECT_EQ(agentStartCommand(*findGuestActuator("cpuset-agent-cgroup")), "sh /lab/agent start cpuset own-cgroup");
  // The agent's own actuator choice, with an option: the empty actuator keeps its place.
  GuestActuator automatic{"auto", "", false, false, "", false};
  EXPECT_EQ(agentStartCommand(automatic), "sh /lab/agent start '' unsteered");
  automatic.steerHousekeeping = true;
  EXPECT_EQ(agentStartCommand(automatic), "sh /lab/agent start");
  EXPECT_EQ(findGuestActuator("none"), nullptr);
  for (const auto& actuator : guestActuators()) EXPECT_EQ(findGuestActuator(actuator.name), &actuator);
}

TEST(GuestsPlan, TheMeasuredUnitIsTheSecond) {
  EXPECT_DOUBLE_EQ(*measuredUnitSeconds("61.20 70.50\n70.52 74.27\n74.30 80.00\n"), 74.27 - 70.52);
  EXPECT_FALSE(measuredUnitSeconds("61.20 70.50\n"));               // only the warm-up
  EXPECT_FALSE(measuredUnitSeconds(""));                            // nothing ran
  EXPECT_FALSE(measuredUnitSeconds("61.20 70.50\nfailed\n"));       // the second unit failed
  EXPECT_FALSE(measuredUnitSeconds("61.20 70.50\n75.00 74.00\n"));  // ended before it started
  EXPECT_FALSE(measuredUnitSeconds("cat: can't open '/tmp/gb/units'\n"));
  const auto window = measuredUnitWindow("61.20 70.50\n70.52 74.27\n74.30 80.00\n");
  ASSERT_TRUE(window);
  EXPECT_DOUBLE_EQ(window->start, 70.52);
  EXPECT_DOUBLE_EQ(window->end, 74.27);
  EXPECT_FALSE(measuredUnitWindow("61.20 70.50\nfailed\n"));
}

TEST(GuestsReport, ThroughputIsUnitsPerSecondSummedOverTheGuests) {
  const GuestSample sample{"cpuset", "compute", GuestMode::Unfolded, 1, {2.0, 4.0}};
  EXPECT_DOUBLE_EQ(sample.throughput(), 0.5 + 0.25);
}

TEST(GuestsReport, ReadsTheEmulatedBenchsRowsOfTheSteadyScenarioOnly) {
  const std::string csv =
      "scenario,mode,repetition,vm,window_s,ops_per_s,cpus,ops_per_cpu_s,delay_ratio,context_switches_per_s,"
      "preferred_changes,preferred_at_end,weights_applied,host_cpus\n"
      "steady/message,unfolded,1,vm-1,1.250,100000.0,0.66,150000.0,0.8,10.0,0,4,1,\"0,1\"\n"
      "steady/message,unfolded,1,vm-2,1.250,120000.0,0.66,150000.0,0.8,10.0,0,4,1,\"0,1\"\n"
      "steady/message,vcpufold,1,vm-1,1.250,130000.0,0.66,150000.0,0.8,10.0,2,4,1,\"0,1\"\n"
      "steady/message,unfolded,2,vm-1,1.250,90000.0,0.66,150000.0,0.8,10.0,0,4,1,\"0,1\"\n"
      "large-dynamic,unfolded,1,vm-1,19.9,69087.6,0.66,103719.4,0.92,0.0,0,16,1,\"0,1\"\n";
  const auto samples = readEmulatedResults(csv);
  EXPECT_EQ(emulatedThroughputs(samples, "message", "unfolded"), (std::vector<double>{220000.0, 90000.0}));
  EXPECT_EQ(emulatedThroughputs(samples, "message", "vcpufold"), (std::vector<double>{130000.0}));
  EXPECT_TRUE(emulatedThroughputs(samples, "dynamic", "unfolded").empty());
  EXPECT_EQ(samples.size(), 3U);
}

namespace {

// Three repetitions of every mode: unfolded at 1 unit/s a guest, vcpufold at
// `vcpufoldSpeed` times that, fixed at `fixedSpeed`, with a little spread.
std::vector<GuestSample> samplesOf(const std::string& workload, double vcpufoldSpeed, double fixedSpeed) {
  std::vector<GuestSample> samples;
  const double spread[] = {0.98, 1.0, 1.02};
  for (unsigned repetition = 1; repetition <= 3; ++repetition) {
    const double noise = spread[repetition - 1];
    for (const auto& [mode, speed] :
         {std::pair{GuestMode::Unfolded, 1.0}, std::pair{GuestMode::Vcpufold, vcpufoldSpeed},
          std::pair{GuestMode::Fixed, fixedSpeed}})
      samples.push_back({"cpuset", workload, mode, repetition, std::vector<double>(3, 10.0 / (speed * noise))});
  }
  return samples;
}

GuestsReportInput inputWith(std::vector<GuestSample> samples, std::vector<std::string> workloads) {
  GuestsReportInput input;
  input.guests = 3;
  input.vcpus = 4;
  input.pcpus = 2;
  input.fixedVcpus = 1;
  input.repetitions = 3;
  input.workloads = std::move(workloads);
  input.actuators = {{"cpuset", "6.1.0-57-cloud-amd64", ""}, {"kernel", "", "the patched kernel is not built"}};
  input.samples = std::move(samples);
  input.emulatedNote = "emulated note";
  return input;
}

}  // namespace

TEST(GuestsReport, JudgesTheTargetsFromTheirIntervals) {
  auto samples = samplesOf("hackbench-pipe", 1.5, 1.45);
  const auto compute = samplesOf("compute", 0.8, 0.8);
  samples.insert(samples.end(), compute.begin(), compute.end());
  const std::string report = renderGuestsReport(inputWith(samples, {"hackbench-pipe", "compute"}));

  EXPECT_NE(report.find("| `cpuset` hackbench-pipe: vcpufold / unfolded >= 1.20 | 1.50 ["), std::string::npos)
      << report;
  // Paired: every repetition's drift (0.98-1.02) touches its modes alike and cancels.
  EXPECT_NE(report.find("vcpufold / unfolded >= 1.20 | 1.50 [1.50, 1.50] | met |"), std::string::npos) << report;
  // Unpaired, the same drift widens the interval; that table follows the paired one.
  EXPECT_NE(report.find("Unpaired, for comparison:"), std::string::npos) << report;
  EXPECT_NE(report.find("| hackbench-pipe | 1.50 [1.44, 1.56] | 1.03 ["), std::string::npos) << report;
  EXPECT_NE(report.find("| `cpuset` hackbench-pipe: vcpufold / fixed >= 0.95 | 1.03 ["), std::string::npos) << report;
  // compute at 0.8 of unfolded: the whole interval below 0.95.
  EXPECT_NE(report.find("| `cpuset` compute: vcpufold / unfolded >= 0.95 | 0.80 [0.80, 0.80] | missed |"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("Not run: the patched kernel is not built"), std::string::npos) << report;
  EXPECT_EQ(report.find("`kernel` hackbench"), std::string::npos) << "a skipped actuator has no targets";
}

TEST(GuestsReport, TheCpusetActuatorOnThePatchedKernelIsTabulatedWithoutTargets) {
  auto samples = samplesOf("hackbench-pipe", 1.5, 1.45);
  for (auto sample : samplesOf("hackbench-pipe", 1.1, 1.1)) {
    sample.actuator = "cpuset-patched";
    samples.push_back(sample);
  }
  auto input = inputWith(samples, {"hackbench-pipe"});
  input.actuators.push_back({"cpuset-patched", "6.12.117", ""});
  const std::string report = renderGuestsReport(input);
  EXPECT_NE(report.find("##### Actuator `cpuset-patched` (guest kernel 6.12.117)"), std::string::npos) << report;
  EXPECT_NE(report.find("| hackbench-pipe | 0.300 [0.294, 0.306] | 0.330"), std::string::npos) << report;
  EXPECT_NE(report.find("| `cpuset` hackbench-pipe: vcpufold / unfolded >= 1.20"), std::string::npos) << report;
  EXPECT_EQ(report.find("| `cpuset-patched` hackbench-pipe:"), std::string::npos) << "no target rows: " << report;
}

TEST(GuestsReport, OneRepetitionShowsNothing) {
  std::vector<GuestSample> samples;
  for (const GuestMode mode : kGuestModes)
    samples.push_back({"cpuset", "hackbench-pipe", mode, 1, {mode == GuestMode::Unfolded ? 10.0 : 5.0}});
  const std::string report = renderGuestsReport(inputWith(samples, {"hackbench-pipe"}));
  EXPECT_NE(report.find("vcpufold / unfolded >= 1.20 | 2.00 (one run) | not shown |"), std::string::npos) << report;
}

TEST(GuestsReport, SetsTheEmulatedRatioBesideTheRealOneAndFlagsAGapOverAFifth) {
  auto input = inputWith(samplesOf("hackbench-pipe", 1.5, 1.45), {"hackbench-pipe"});
  for (unsigned repetition = 1; repetition <= 3; ++repetition) {
    input.emulated.push_back({"message", "unfolded", repetition, 100000.0 + repetition});
    input.emulated.push_back({"message", "vcpufold", repetition, 100000.0 - repetition});
    input.emulated.push_back({"message", "static-fair", repetition, 140000.0});
  }
  const std::string report = renderGuestsReport(input);
  // vcpufold: real 1.50 against emulated 1.00, a gap of half; fixed: 1.45 against 1.40.
  EXPECT_NE(report.find("| hackbench-pipe (`cpuset`) | message | vcpufold / unfolded | 1.50 ["), std::string::npos)
      << report;
  EXPECT_NE(report.find("| 1.50 (gap over 20%) |"), std::string::npos) << report;
  EXPECT_NE(report.find("| hackbench-pipe (`cpuset`) | message | fixed / unfolded | 1.45 ["), std::string::npos)
      << report;
  EXPECT_NE(report.find("| 1.04 |"), std::string::npos) << report;
}

TEST(GuestsReport, TheCsvHasOneRowPerGuest) {
  GuestSample sample{"kernel", "files", GuestMode::Fixed, 2, {4.0, 5.0}, 3};
  sample.hintChanges = 4;
  sample.minutes = 1.5;
  sample.steadyHintChanges = 1;
  sample.steadyMinutes = 0.075;
  sample.hostWaitCredits = 2;
  EXPECT_EQ(guestsCsv({sample}),
            "actuator,workload,mode,repetition,guest,unit_s,units_per_s_all_guests,overdue_acks,hint_changes,minutes,"
            "steady_hint_changes,steady_minutes,host_wait_credits\n"
            "kernel,files,fixed,2,1,4.000,0.45000,3,4,1.50,1,0.075,2\n"
            "kernel,files,fixed,2,2,5.000,0.45000,3,4,1.50,1,0.075,2\n");
}

TEST(GuestsReport, CountsOverdueAcknowledgementsAndHintChangesPerActuatorAndModeWithHostd) {
  auto samples = samplesOf("hackbench-pipe", 1.5, 1.45);
  for (auto& sample : samples) sample.minutes = 2;
  samples[1].overdueAcks = 2;  // repetition 1, vcpufold
  samples[1].hintChanges = 4;
  samples[5].overdueAcks = 1;  // repetition 2, fixed
  samples[4].hostWaitCredits = 3;  // repetition 2, vcpufold: awaited longer, not overdue
  samples[0].overdueAcks = 7;  // unfolded has no hostd: never counted
  samples[0].hintChanges = 9;
  for (auto& sample : samples) sample.steadyMinutes = 0.5;
  samples[4].steadyHintChanges = 1;  // repetition 2, vcpufold: one change in steady time
  samples[3].steadyHintChanges = 5;  // unfolded: never counted
  const std::string report = renderGuestsReport(inputWith(samples, {"hackbench-pipe"}));
  EXPECT_NE(report.find("| `cpuset` | vcpufold | 1 of 3 | 2 | 3 | 1 of 3 | 0.0, 2.0 | 1 of 3 | 0.0, 2.0 |"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("| `cpuset` | fixed | 1 of 3 | 1 | 0 | 0 of 3 | 0.0, 0.0 | 0 of 3 | 0.0, 0.0 |"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("| `cpuset`: 0 preferred-count changes per minute in steady time (vcpufold) | median 0.0, "
                        "max 2.0 /min | missed |"),
            std::string::npos)
      << report;
  samples[4].steadyHintChanges = 0;
  EXPECT_NE(renderGuestsReport(inputWith(samples, {"hackbench-pipe"}))
                .find("| `cpuset`: 0 preferred-count changes per minute in steady time (vcpufold) | median 0.0, "
                      "max 0.0 /min | met |"),
            std::string::npos);
  // Without the units' windows there is no steady time: said, never a 0 and never met.
  for (auto& sample : samples) sample.steadyMinutes = 0;
  const std::string unread = renderGuestsReport(inputWith(samples, {"hackbench-pipe"}));
  EXPECT_NE(unread.find("| `cpuset` | vcpufold | 1 of 3 | 2 | 3 | 1 of 3 | 0.0, 2.0 | 0 of 3 | no steady time |"),
            std::string::npos)
      << unread;
  EXPECT_EQ(unread.find("in steady time (vcpufold)"), std::string::npos) << unread;
}

TEST(GuestsReport, HintChangesAfterEachGuestsFirstAreCounted) {
  // Lines as hostd wrote them in a guests-bench measurement (stock 6.12,
  // hackbench-pipe), shortened where the reason goes on.
  const std::string log =
      "info: vcpufold-hostd 0.1.0 starting: libvirt qemu:///system, tick 1000 ms, lease 3 ticks\n"
      "info: vcpufold-bench-guest-1: hint none -> 4: agent has not acknowledged a hint: all 4 vCPUs\n"
      "info: vcpufold-bench-guest-3: hint none -> 4: agent has not acknowledged a hint: all 4 vCPUs\n"
      "info: vcpufold-bench-guest-1: hint 4 -> 1: contention: demand 4.50 > capacity 1.95; fair share 0.65\n"
      "info: vcpufold-bench-guest-3: hint 4 -> 1: contention: demand 4.50 > capacity 1.95; fair share 0.65\n"
      "info: vcpufold-bench-guest-3: hint seq 17 not acknowledged in 3000 ms: not cooperative\n"
      "info: vcpufold-bench-guest-3: hint 1 -> 4: agent has not acknowledged a hint: all 4 vCPUs\n"
      "info: vcpufold-bench-guest-3: hint 4 -> 1: contention: demand 12.00 > capacity 2.00; fair share 0.67\n"
      "info: vcpufold-bench-guest-1: hint 1 -> none: the lease runs out\n";
  EXPECT_EQ(hintChangesAfterSettling(log), 2u);
  EXPECT_EQ(hintChangesAfterSettling(""), 0u);
}

TEST(GuestsReport, SteadyHintChangesAreTheAgentsChangesOfCountWithinTheWindow) {
  // Lines as the agent writes them at debug level (its hint log, the
  // guest's monotonic clock), with its other lines between.
  const std::string log =
      "info: online CPUs in 0-3\n"
      "debug: hint seq 1 (4 vCPUs) received at 20100.500 ms, applied in 0.210 ms\n"
      "debug: hint seq 2 (1 vCPUs) received at 31000.000 ms, applied in 3.100 ms\n"
      "info: folded onto 0 via cpuset: host hint seq 2 (1 vCPUs)\n"
      "debug: hint seq 3 (1 vCPUs) received at 41000.000 ms, applied in 0.100 ms\n"
      "debug: hint seq 4 (2 vCPUs) received at 52000.000 ms, applied in 1.000 ms\n"
      "debug: hint seq 5 (2 vCPUs) received at 53000.000 ms, applied in 0.100 ms\n"
      "debug: hint seq 6 (1 vCPUs) received at 61000.000 ms, applied in 1.000 ms\n"
      "debug: hint seq 7 (4 vCPUs) received at 75000.000 ms, applied in 1.000 ms\n"
      "debug: hint seq x (9 vCPUs) received at 62000.000 ms\n";
  EXPECT_EQ(hintChangesWithin(log, 40.0, 70.0), 2u);   // 1 -> 2 at 52 s, 2 -> 1 at 61 s; renewals are not changes
  EXPECT_EQ(hintChangesWithin(log, 0.0, 100.0), 4u);   // the first hint is no change; the fold at 31 s and 75 s are
  EXPECT_EQ(hintChangesWithin(log, 62.0, 74.0), 0u);
  EXPECT_EQ(hintChangesWithin("", 0.0, 100.0), 0u);
}

TEST(GuestsReport, ReadsHowLateTheAgentsLoggedTheirLoops) {
  const std::string log =
      "debug: hint seq 40 (1 vCPUs) received at 835053.862 ms, applied in 0.570 ms\n"
      "info: the agent's loop ran 4600 ms after it was due (at 840153.527 ms): the guest did not run it meanwhile\n"
      "info: preferred CPUs 0 -> 0-1 via cpuset (lease of hint seq 40 expired)\n"
      "info: the agent's loop ran 1069 ms after it was due (at 850000.000 ms): the guest did not run it meanwhile\n"
      "info: the agent's loop ran soon\n"
      "info: the agent's loop ran 12 ms before\n";
  EXPECT_EQ(lateAgentLoopsMs(log), (std::vector<double>{4600, 1069}));
  EXPECT_TRUE(lateAgentLoopsMs("").empty());
}

TEST(WhereRan, ReadsTheGuestsDiffLines) {
  const auto sample = parseWhere(
      "window 20.50\npreferred 0\nstat 0 373 0 2943 0 0 0 199\nstat 1 0 0 24 5296 0 0 2\n"
      "irq LOC 0 8680\nirq LOC 1 221\nirq CAL 1 1632\nsoftirq SCHED 1 1579\nthread rcu_preempt 3 844\n"
      "garbage line\nstat x\n");
  EXPECT_DOUBLE_EQ(sample.windowSeconds, 20.5);
  EXPECT_EQ(sample.preferred, std::vector<unsigned>{0});
  ASSERT_EQ(sample.stat.size(), 2u);
  EXPECT_EQ(sample.stat.at(0)[2], 2943);
  EXPECT_EQ(sample.stat.at(1)[3], 5296);
  EXPECT_EQ(sample.events.at("irq LOC").at(1), 221);
  EXPECT_EQ(sample.events.at("irq CAL").at(1), 1632);
  EXPECT_EQ(sample.events.at("thread rcu_preempt").at(3), 844);
}

TEST(WhereRan, TabulatesTheVcpusOutsideThePreferredSetByMode) {
  // Folded onto CPU 0: CPU 1 busy half its time with function-call IPIs; unfolded (preferred all), CPU 1 idle.
  auto folded = parseWhere(
      "window 10\npreferred 0\nstat 0 100 0 100 0 0 0 0\nstat 1 0 0 50 50 0 0 0\nirq CAL 1 200\nirq LOC 0 999\n"
      "thread rcu_preempt 1 40\n");
  folded.actuator = "cpuset-6.12";
  folded.mode = GuestMode::Fixed;
  auto unfolded = parseWhere("window 10\npreferred 0-1\nstat 0 100 0 100 0 0 0 0\nstat 1 0 0 0 100 0 0 0\n");
  unfolded.actuator = "cpuset-6.12";
  unfolded.mode = GuestMode::Unfolded;
  const std::string table = renderWhereTable({folded, unfolded}, 1);
  EXPECT_NE(table.find("`cpuset-6.12`: per vCPU outside the preferred set"), std::string::npos) << table;
  EXPECT_NE(table.find("| busy (% of its time) | 0.0 | - | 50.0 |"), std::string::npos) << table;
  EXPECT_NE(table.find("| irq CAL (/s) | 0.0 | - | 20.0 |"), std::string::npos) << table;
  EXPECT_NE(table.find("| thread rcu_preempt (ticks/s) | 0.0 | - | 4.0 |"), std::string::npos) << table;
  EXPECT_EQ(table.find("irq LOC"), std::string::npos) << "only on the preferred CPU: not a row";
  EXPECT_EQ(renderWhereTable({}, 1), "");
}
