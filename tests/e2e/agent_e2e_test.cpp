// SPDX-License-Identifier: GPL-2.0-or-later
// The real agent in a real guest kernel under QEMU: it finds its virtio port
// by name without udev, applies hints through the cgroup v2 cpuset actuator,
// and CPU-bound tasks move onto the chosen CPUs (/proc/<pid>/stat field 39).
// Skips, saying why, where QEMU cannot run.

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <sstream>
#include <thread>

#include "channel_client.h"
#include "lab_cleanup.h"
#include "qemu_guest.h"
#include "vcpufold/protocol/limits.h"

using namespace vcpufold::protocol;
using vcpufold::testing::ChannelClient;
using vcpufold::testing::QemuGuest;

namespace {

// Stale lab domains go before the tests start, and with this process on SIGTERM.
const bool kLabCleanup = vcpufold::testing::registerLabCleanup();

constexpr int kBootMs = 180'000;
constexpr int kStepMs = 60'000;  // TCG is slow; every wait is still bounded

Hint hint(std::uint64_t seq, std::uint32_t vcpus) { return Hint{seq, vcpus, 120'000, HintPolicy::Auto, "e2e"}; }

class AgentInQemu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto reason = vcpufold::testing::labUnavailableReason())
      GTEST_SKIP() << "end-to-end tests skipped: " << *reason;
    std::string log;
    auto image = vcpufold::testing::buildLabImage(
        "agent-e2e", {VCPUFOLD_SOURCE_DIR "/tests/e2e/guest/agent-e2e.sh:/lab/agent-e2e.sh"}, {VCPUFOLD_AGENT_BINARY},
        log);
    ASSERT_TRUE(image) << "building the guest image failed:\n" << log;
    runDirectory_ = std::filesystem::temp_directory_path() / ("vcpufold-e2e-" + std::to_string(::getpid()));
    guest_ = std::make_unique<QemuGuest>(
        vcpufold::testing::QemuGuestSpec{*image, runDirectory_, "4", "256M", "lab.run=agent-e2e"});
    std::printf("guest under %s in %s\n", QemuGuest::accelerator().c_str(), runDirectory_.c_str());
    ASSERT_TRUE(guest_->waitReady(kBootMs)) << "guest did not come up:\n" << guest_->console();
  }

  void TearDown() override {
    if (HasFailure() && guest_) {
      if (auto log = guest_->run("cat /tmp/e2e/agent.log", 10'000))
        std::printf("agent log:\n%s\n", log->output.c_str());
    }
    guest_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(runDirectory_, ignored);
  }

  // The CPU each burner last ran on.
  std::multiset<int> burnerCpus() {
    auto result = guest_->run("for p in $(cat /tmp/e2e/burners); do cut -d' ' -f39 /proc/$p/stat; done", kStepMs);
    std::multiset<int> cpus;
    if (!result) return cpus;
    std::istringstream lines(result->output);
    for (int cpu; lines >> cpu;) cpus.insert(cpu);
    return cpus;
  }

  bool waitForBurners(const std::function<bool(const std::multiset<int>&)>& condition, std::string& seen) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kStepMs);
    while (std::chrono::steady_clock::now() < deadline) {
      const auto cpus = burnerCpus();
      seen.clear();
      for (int cpu : cpus) seen += std::to_string(cpu) + " ";
      if (cpus.size() == 4 && condition(cpus)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    return false;
  }

  std::filesystem::path runDirectory_;
  std::unique_ptr<QemuGuest> guest_;
};

}  // namespace

TEST_F(AgentInQemu, FindsItsPortByNameAndFoldsCpuBoundTasks) {
  ChannelClient host;
  ASSERT_TRUE(host.connect(guest_->hintSocket(), 10'000));
  auto hello = host.greetAgent(kStepMs);
  ASSERT_TRUE(hello) << "no hello from the agent over the virtio port";
  ASSERT_TRUE(hello->agent);
  EXPECT_EQ(hello->agent->online, CpuSet::range(0, 3));
  ASSERT_FALSE(hello->agent->actuators.empty());
  EXPECT_EQ(hello->agent->actuators.front(), Actuator::Cpuset) << "stock kernel: cpuset is the best actuator";

  std::string seen;
  ASSERT_TRUE(host.send(hint(1, 1)));
  auto ack = host.receiveType<Ack>(kStepMs);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->applied, (CpuSet{0}));
  EXPECT_EQ(ack->actuator, Actuator::Cpuset);
  EXPECT_TRUE(waitForBurners([](const auto& cpus) { return cpus.count(0) == 4; }, seen))
      << "burners not folded onto CPU 0: " << seen;
  auto effective = guest_->run("cat /sys/fs/cgroup/vcpufold.fold/cpuset.cpus.effective", kStepMs);
  ASSERT_TRUE(effective);
  EXPECT_EQ(effective->output, "0\n");

  ASSERT_TRUE(host.send(hint(2, 2)));
  ack = host.receiveType<Ack>(kStepMs);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->applied, (CpuSet{0, 1}));
  EXPECT_TRUE(
      waitForBurners([](const auto& cpus) { return cpus.count(0) + cpus.count(1) == 4 && cpus.count(1) > 0; }, seen))
      << "burners not on CPUs 0-1: " << seen;

  ASSERT_TRUE(host.send(hint(3, 4)));
  ack = host.receiveType<Ack>(kStepMs);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->applied, CpuSet::range(0, 3));
  EXPECT_TRUE(waitForBurners([](const auto& cpus) { return cpus.count(2) + cpus.count(3) > 0; }, seen))
      << "burners did not spread after unfolding: " << seen;

  // Fold again, then stop the agent: the guest must be left unfolded.
  ASSERT_TRUE(host.send(hint(4, 1)));
  ASSERT_TRUE(host.receiveType<Ack>(kStepMs));
  EXPECT_TRUE(waitForBurners([](const auto& cpus) { return cpus.count(0) == 4; }, seen)) << seen;
  auto stopped = guest_->run(
      "kill $(cat /tmp/e2e/agent.pid); i=0; while kill -0 $(cat /tmp/e2e/agent.pid) 2>/dev/null && [ $i -lt 100 ]; do "
      "sleep 0.1; i=$((i+1)); done; ls -d /sys/fs/cgroup/vcpufold.fold 2>&1; cat /run/vcpufold/cpuset-state.json 2>&1",
      kStepMs);
  ASSERT_TRUE(stopped);
  EXPECT_NE(stopped->output.find("No such file"), std::string::npos) << stopped->output;
  EXPECT_TRUE(waitForBurners([](const auto& cpus) { return cpus.count(2) + cpus.count(3) > 0; }, seen))
      << "burners still folded after the agent stopped: " << seen;
}

TEST_F(AgentInQemu, SurvivesHostReconnectsAndPortReplug) {
  ChannelClient host;
  ASSERT_TRUE(host.connect(guest_->hintSocket(), 10'000));
  ASSERT_TRUE(host.receiveType<Hello>(kStepMs)) << "no hello";

  // The host side closes: the guest reads EOF and must keep probing, not exit.
  host.close();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ASSERT_TRUE(host.connect(guest_->hintSocket(), 10'000));
  ASSERT_TRUE(host.receiveType<Hello>(kStepMs)) << "no hello after the host reconnected";
  // As hostd does, the answer to an agent's hello starts with 0xFF: the agent
  // has just reopened and discards up to it (protocol.md section 3).
  ASSERT_TRUE(host.sendRaw(std::string(1, kResyncByte)));
  ASSERT_TRUE(host.send(hint(1, 2)));
  auto ack = host.receiveType<Ack>(kStepMs);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->applied, (CpuSet{0, 1}));

  // Unplug the port from the running guest, then plug a new one with the same name.
  auto unplugged = guest_->qmp(R"({"execute":"device_del","arguments":{"id":"hintport"}})", 10'000);
  ASSERT_TRUE(unplugged);
  EXPECT_NE(unplugged->find("return"), std::string::npos) << *unplugged;
  auto gone = guest_->run(
      "i=0; while grep -qx org.vcpufold.hint.0 /sys/class/virtio-ports/*/name 2>/dev/null && [ $i -lt 100 ]; do "
      "sleep 0.1; i=$((i+1)); done; kill -0 $(cat /tmp/e2e/agent.pid) && echo agent-alive",
      kStepMs);
  ASSERT_TRUE(gone);
  EXPECT_NE(gone->output.find("agent-alive"), std::string::npos) << "the agent died when its port went away";
  auto plugged =
      guest_->qmp(R"({"execute":"device_add","arguments":{"driver":"virtserialport","bus":"vser0.0","chardev":"hint",)"
                  R"("name":"org.vcpufold.hint.0","id":"hintport2"}})",
                  10'000);
  ASSERT_TRUE(plugged);
  EXPECT_NE(plugged->find("return"), std::string::npos) << *plugged;
  auto hello = host.receiveType<Hello>(kStepMs);
  ASSERT_TRUE(hello) << "no hello on the new port";
  ASSERT_TRUE(host.sendRaw(std::string(1, kResyncByte)));
  ASSERT_TRUE(host.send(hint(2, 1)));
  ack = host.receiveType<Ack>(kStepMs);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->applied, (CpuSet{0}));
  auto log = guest_->run("cat /tmp/e2e/agent.log", kStepMs);
  ASSERT_TRUE(log);
  EXPECT_NE(log->output.find("reopening"), std::string::npos) << log->output;
}
