// hostd decides when a guest's demand changes, not only on its tick: the real
// hostd (a 3 s tick, so that a tick cannot pass for an event), the real agents
// (which report a change of runnable tasks at once) and two emulated VMs on
// this host's CPUs. A neighbour waking folds a VM within a fraction of the
// tick; the neighbour going idle unfolds it once the unfold delay (1 s) has
// passed, not before and not at the next tick. An agent that starts
// acknowledging gets its share at once.

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include "fleet.h"
#include "latency_stages.h"

using namespace vcpufold::bench;
using vcpufold::testing::waitUntil;

namespace {

constexpr unsigned kTickMs = 3000;

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

unsigned preferredNow(const Fleet& fleet, std::size_t vm) {
  const auto timeline = readTimeline(fleet.file(vm, ".preferred.log"));
  return timeline.empty() ? 0 : timeline.back().second;
}

// Milliseconds from the last change of `vm`'s task count to the first time
// `other` held a preferred count that `wanted` accepts; negative if it never did.
template <typename Wanted>
double reactionMs(const Fleet& fleet, std::size_t vm, std::size_t other, Wanted wanted) {
  const auto tasks = readTimeline(fleet.file(vm, ".tasks.log"));
  if (tasks.empty()) return -1;
  const long changed = tasks.back().first;
  for (const auto& [at, value] : readTimeline(fleet.file(other, ".preferred.log")))
    if (at > changed && wanted(value)) return static_cast<double>(at - changed) / 1e6;
  return -1;
}

VmSpec computeVm(const char* name, unsigned tasks) {
  VmSpec spec;
  spec.name = name;
  spec.vcpus = 4;
  spec.workload = "compute";
  spec.schedule = Schedule{Schedule::Kind::Constant, tasks};
  return spec;
}

}  // namespace

TEST(HostdReaction, ANeighbourWakingFoldsAtOnceAndItsIdlingUnfoldsAfterTheDelay) {
  if (std::thread::hardware_concurrency() > 2) GTEST_SKIP() << "the emulated VMs' load assumes 2 host CPUs";
  FleetBinaries binaries{VCPUFOLD_EMULATED_VM, VCPUFOLD_AGENT_BINARY, VCPUFOLD_HOSTD_BINARY};
  vcpufold::testing::FixtureTree work("");
  Fleet fleet(binaries, work.root().string() + "/fleet", {computeVm("vm-a", 2), computeVm("vm-b", 0)},
              FleetOptions{kTickMs, 0});
  fleet.startAgents();
  fleet.startHostd();
  const std::string hostdLog = fleet.directory() + "/hostd.log";
  // Both hinted all their vCPUs until they acknowledge; then vm-a keeps 2 or more.
  ASSERT_TRUE(waitUntil(
      [&] {
        return readFile(hostdLog).find("vm-a: hint none -> 4") != std::string::npos &&
               readFile(hostdLog).find("vm-b: hint none -> 4") != std::string::npos;
      },
      4 * kTickMs))
      << readFile(hostdLog);
  std::this_thread::sleep_for(std::chrono::milliseconds(kTickMs));  // both acknowledged, statuses in

  // vm-b wakes with 4 tasks: 6 wanted on 2 CPUs, vm-a's share is 1.
  fleet.setTasks(1, 4);
  ASSERT_TRUE(waitUntil([&] { return preferredNow(fleet, 0) == 1; }, 2 * kTickMs)) << readFile(hostdLog);
  const double fold = reactionMs(fleet, 1, 0, [](unsigned count) { return count == 1; });
  EXPECT_GT(fold, 0);
  EXPECT_LT(fold, 1000) << "folded " << fold << " ms after the change: a tick, not the event\n" << readFile(hostdLog);
  EXPECT_NE(readFile(hostdLog).find("vm-b reports demand 4.00"), std::string::npos) << readFile(hostdLog);

  // vm-b goes idle: vm-a's 2 tasks may have both CPUs again, after the unfold delay.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  fleet.setTasks(1, 0);
  ASSERT_TRUE(waitUntil([&] { return preferredNow(fleet, 0) >= 2; }, 3 * kTickMs)) << readFile(hostdLog);
  const double unfold = reactionMs(fleet, 1, 0, [](unsigned count) { return count >= 2; });
  EXPECT_GE(unfold, 1000) << "unfolded before the unfold delay";
  EXPECT_LT(unfold, 2000) << "unfolded " << unfold << " ms after the change: at a tick, not when due\n"
                          << readFile(hostdLog);
  EXPECT_NE(readFile(hostdLog).find("an unfold falls due"), std::string::npos) << readFile(hostdLog);
  fleet.stop();
}

TEST(HostdReaction, AnAgentsFirstAcknowledgementGetsItsShareWithoutWaitingForATick) {
  if (std::thread::hardware_concurrency() > 2) GTEST_SKIP() << "the emulated VMs' load assumes 2 host CPUs";
  FleetBinaries binaries{VCPUFOLD_EMULATED_VM, VCPUFOLD_AGENT_BINARY, VCPUFOLD_HOSTD_BINARY};
  vcpufold::testing::FixtureTree work("");
  // Both busy with 4 tasks on 2 CPUs: each one's share is 1 CPU.
  Fleet fleet(binaries, work.root().string() + "/fleet", {computeVm("vm-a", 4), computeVm("vm-b", 4)},
              FleetOptions{kTickMs, 0});
  fleet.startAgents();
  fleet.startHostd();
  const std::string hostdLog = fleet.directory() + "/hostd.log";
  ASSERT_TRUE(waitUntil([&] { return preferredNow(fleet, 0) == 1; }, 4 * kTickMs)) << readFile(hostdLog);
  // From hostd's first hint (all 4 vCPUs until the agent acknowledges one) to
  // the first of 1 vCPU, as the agent received them: the acknowledgement, not
  // the next tick, brings the share.
  const auto hints = readAgentHints(fleet.file(0, ".agent.log"));
  ASSERT_FALSE(hints.empty());
  EXPECT_EQ(hints.front().vcpus, 4u);
  const auto fold = std::find_if(hints.begin(), hints.end(), [](const AgentHint& hint) { return hint.vcpus == 1; });
  ASSERT_NE(fold, hints.end()) << readFile(hostdLog);
  EXPECT_LT(fold->receivedMs - hints.front().receivedMs, 1000)
      << "folded a tick after the all-vCPUs hint, not at the acknowledgement\n"
      << readFile(hostdLog);
  EXPECT_NE(readFile(hostdLog).find("vm-a acknowledges hints"), std::string::npos) << readFile(hostdLog);
  fleet.stop();
}
