// SPDX-License-Identifier: GPL-2.0-or-later
// The patched guest kernel (kernel-patches/6.12, CONFIG_PREFERRED_CPU=y) in a
// real guest under QEMU, with the real agent: the writable preferred-CPU file
// and its checks, the scheduler folding unpinned CPU-bound tasks onto the
// preferred CPUs while a pinned task stays put, CPU hotplug, and hackbench
// folded and unfolded. kernel.build (build-kernel.sh on) builds the kernel
// first. Skips, saying why, where QEMU cannot run.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <thread>

#include "channel_client.h"
#include "child_process.h"
#include "lab_cleanup.h"
#include "qemu_guest.h"

using namespace vcpufold::protocol;
using vcpufold::testing::ChannelClient;
using vcpufold::testing::QemuGuest;
using vcpufold::testing::runShell;
using vcpufold::testing::waitUntil;

namespace {

// Stale lab domains go before the tests start, and with this process on SIGTERM.
const bool kLabCleanup = vcpufold::testing::registerLabCleanup();

constexpr int kBootMs = 120'000;
constexpr int kStepMs = 60'000;
constexpr const char* kPreferred = "/sys/devices/system/cpu/preferred";

class PatchedKernel : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto reason = vcpufold::testing::labUnavailableReason()) GTEST_SKIP() << "kernel tests skipped: " << *reason;
    const std::string kernel = vcpufold::testing::patchedKernelImage();
    ASSERT_TRUE(std::filesystem::exists(kernel)) << kernel << " missing: tests/kernel/build-kernel.sh on builds it";
    const std::string hackbench = vcpufold::testing::fetchHackbench();
    ASSERT_TRUE(std::filesystem::exists(hackbench)) << "could not unpack hackbench from rt-tests";
    std::string log;
    auto image = vcpufold::testing::buildLabImage(
        "kernel-test", {VCPUFOLD_SOURCE_DIR "/tests/kernel/guest/kernel-test.sh:/lab/kernel-test.sh"},
        {VCPUFOLD_AGENT_BINARY, hackbench}, log);
    ASSERT_TRUE(image) << "building the guest image failed:\n" << log;
    image->kernel = kernel;
    runDirectory_ = std::filesystem::temp_directory_path() / ("vcpufold-kernel-" + std::to_string(::getpid()));
    guest_ = std::make_unique<QemuGuest>(
        vcpufold::testing::QemuGuestSpec{*image, runDirectory_, "4", "256M", "lab.run=kernel-test"});
    ASSERT_TRUE(guest_->waitReady(kBootMs)) << "guest did not come up:\n" << guest_->console();
    // The control port answers before the payload has made /tmp/kt and the
    // agent's configuration.
    ASSERT_TRUE(waitUntil([&] { return run("test -e /tmp/kt/ready && echo ready") == "ready\n"; }, kBootMs, 300))
        << "the kernel-test payload did not finish:\n"
        << guest_->console();
    ASSERT_EQ(run("uname -r | grep -c '^6\\.12'"), "1\n") << "not the patched 6.12 kernel";
  }

  void TearDown() override {
    if (HasFailure() && guest_) std::printf("agent log:\n%s\n", run("cat /tmp/kt/agent.log 2>&1").c_str());
    guest_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(runDirectory_, ignored);
  }

  std::string run(const std::string& command) {
    auto result = guest_->run(command, kStepMs);
    return result ? result->output : "(no answer)";
  }

  std::string preferred() { return run(std::string("cat ") + kPreferred); }

  // Writes to the preferred file; what the shell said and the exit status.
  std::string write(const std::string& text) {
    return run("(echo '" + text + "' > " + kPreferred + ") 2>&1; echo rc=$?");
  }

  void startBurners(const std::string& file, int count, const std::string& prefix = "") {
    run("for i in $(seq " + std::to_string(count) + "); do " + prefix +
        " sh -c 'while :; do :; done' </dev/null >/dev/null 2>&1 & echo $! >>/tmp/kt/" + file + "; done");
  }

  // The CPUs the tasks listed in /tmp/kt/FILE last ran on (/proc/<pid>/stat field 39).
  std::multiset<int> cpusOf(const std::string& file) {
    std::istringstream lines(run("for p in $(cat /tmp/kt/" + file + "); do cut -d' ' -f39 /proc/$p/stat; done"));
    std::multiset<int> cpus;
    for (int cpu; lines >> cpu;) cpus.insert(cpu);
    return cpus;
  }

  std::filesystem::path runDirectory_;
  std::unique_ptr<QemuGuest> guest_;
};

}  // namespace

TEST_F(PatchedKernel, PreferredFileReadsBackAndRefusesInvalidWrites) {
  EXPECT_EQ(preferred(), "0-3\n");
  EXPECT_EQ(run(std::string("stat -c %a ") + kPreferred), "644\n") << "the write interface is root-writable";
  // Not active, beyond the possible CPUs, without the first housekeeping
  // CPU, unparsable: each is refused with EINVAL and changes nothing.
  for (const char* bad : {"5", "0-7", "99", "1-3", "abc", "0,x", "-1", "3-1"}) {
    const std::string said = write(bad);
    EXPECT_NE(said.find("Invalid argument"), std::string::npos) << bad << ": " << said;
    EXPECT_NE(said.find("rc=1"), std::string::npos) << bad << ": " << said;
    EXPECT_EQ(preferred(), "0-3\n") << "after writing " << bad;
  }
  EXPECT_EQ(write("0,2"), "rc=0\n");
  EXPECT_EQ(preferred(), "0,2\n");
  EXPECT_EQ(write("1"), "sh: write error: Invalid argument\nrc=1\n");
  EXPECT_EQ(preferred(), "0,2\n") << "a refused write keeps the mask in force";
  EXPECT_EQ(write(""), "rc=0\n");
  EXPECT_EQ(preferred(), "0-3\n") << "an empty write gives back every active CPU";
}

TEST_F(PatchedKernel, AgentHintFoldsUnpinnedTasksAndPinnedOnesStay) {
  startBurners("burners", 4);
  std::multiset<int> cpus;
  EXPECT_TRUE(waitUntil([&] { return (cpus = cpusOf("burners")).count(0) < 4 && cpus.size() == 4; }, kStepMs, 300));

  run("vcpufold-agent </dev/null >>/tmp/kt/agent.log 2>&1 & echo $! >/tmp/kt/agent.pid");
  ChannelClient host;
  ASSERT_TRUE(host.connect(guest_->hintSocket(), 10'000));
  auto hello = host.greetAgent(kStepMs);
  ASSERT_TRUE(hello && hello->agent) << "no hello from the agent";
  ASSERT_FALSE(hello->agent->actuators.empty());
  EXPECT_EQ(hello->agent->actuators.front(), Actuator::Kernel) << "the patched kernel's file is the best actuator";

  ASSERT_TRUE(host.send(Hint{1, 1, 120'000, HintPolicy::Auto, "kernel test"}));
  auto ack = host.receiveType<Ack>(kStepMs);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->actuator, Actuator::Kernel);
  EXPECT_EQ(ack->applied, (CpuSet{0}));
  EXPECT_EQ(preferred(), "0\n");
  const auto hinted = std::chrono::steady_clock::now();
  EXPECT_TRUE(waitUntil([&] { return (cpus = cpusOf("burners")).count(0) == 4; }, kStepMs, 200))
      << "unpinned burners not folded onto CPU 0";
  std::printf("4 unpinned burners on CPU 0 %.1f s after the ack\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - hinted).count());

  // A task whose affinity allows only a CPU that is not preferred stays there.
  startBurners("pinned", 1, "taskset -c 3");
  for (int poll = 0; poll < 10; ++poll) {
    EXPECT_EQ(cpusOf("pinned"), (std::multiset<int>{3})) << "poll " << poll;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  EXPECT_EQ(cpusOf("burners").count(0), 4u) << "unpinned burners left the preferred CPU";

  ASSERT_TRUE(host.send(Hint{2, 4, 120'000, HintPolicy::Auto, "kernel test"}));
  ack = host.receiveType<Ack>(kStepMs);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->applied, CpuSet::range(0, 3));
  EXPECT_EQ(preferred(), "0-3\n");
  EXPECT_TRUE(waitUntil([&] { return (cpus = cpusOf("burners")).count(0) < 4; }, kStepMs, 200))
      << "burners did not spread after the unfold";

  // Folded again, then the agent stops: the kernel gets every active CPU back.
  ASSERT_TRUE(host.send(Hint{3, 2, 120'000, HintPolicy::Auto, "kernel test"}));
  ASSERT_TRUE(host.receiveType<Ack>(kStepMs));
  EXPECT_EQ(preferred(), "0-1\n");
  run("kill $(cat /tmp/kt/agent.pid); i=0; while kill -0 $(cat /tmp/kt/agent.pid) 2>/dev/null && [ $i -lt 100 ]; do "
      "sleep 0.1; i=$((i+1)); done");
  EXPECT_EQ(preferred(), "0-3\n") << "the agent's stop left the guest folded";
}

TEST_F(PatchedKernel, CpuHotplugKeepsTheMaskWithinActiveCpus) {
  ASSERT_EQ(write("0-1"), "rc=0\n");
  ASSERT_EQ(run("echo 0 > /sys/devices/system/cpu/cpu1/online; cat /sys/devices/system/cpu/online"), "0,2-3\n");
  EXPECT_EQ(preferred(), "0\n") << "an offline CPU is not preferred";
  EXPECT_EQ(write("0-1"), "sh: write error: Invalid argument\nrc=1\n") << "an offline CPU cannot be asked for";
  ASSERT_EQ(run("echo 1 > /sys/devices/system/cpu/cpu1/online; cat /sys/devices/system/cpu/online"), "0-3\n");
  EXPECT_EQ(preferred(), "0-1\n") << "the request holds across the CPU's return";
  ASSERT_EQ(run("echo 0 > /sys/devices/system/cpu/cpu3/online; echo rc=$?"), "rc=0\n");
  EXPECT_EQ(preferred(), "0-1\n");
  EXPECT_EQ(write(""), "rc=0\n");
  EXPECT_EQ(preferred(), "0-2\n") << "all active CPUs, without the offline one";
  ASSERT_EQ(run("echo 1 > /sys/devices/system/cpu/cpu3/online; echo rc=$?"), "rc=0\n");
  EXPECT_EQ(preferred(), "0-3\n") << "with no request, a CPU that comes back is preferred";
}

TEST_F(PatchedKernel, TheAgentFollowsCpuHotplugWhileFolded) {
  run("vcpufold-agent </dev/null >>/tmp/kt/agent.log 2>&1 & echo $! >/tmp/kt/agent.pid");
  ChannelClient host;
  ASSERT_TRUE(host.connect(guest_->hintSocket(), 10'000));
  ASSERT_TRUE(host.greetAgent(kStepMs));
  ASSERT_TRUE(host.send(Hint{1, 2, 120'000, HintPolicy::Auto, "kernel test"}));
  auto ack = host.receiveType<Ack>(kStepMs);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->applied, CpuSet::range(0, 1));
  EXPECT_EQ(preferred(), "0-1\n");

  // CPU 1 goes offline while folded onto it: the agent re-places the lease's
  // two CPUs on what is online, writes a mask the kernel accepts, and says
  // hello with the new online set.
  ASSERT_EQ(run("echo 0 > /sys/devices/system/cpu/cpu1/online; cat /sys/devices/system/cpu/online"), "0,2-3\n");
  auto hello = host.receiveType<Hello>(kStepMs);
  ASSERT_TRUE(hello && hello->agent);
  EXPECT_EQ(hello->agent->online, (CpuSet{0, 2, 3}));
  ack = host.receiveType<Ack>(kStepMs);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->applied, (CpuSet{0, 2}));
  EXPECT_EQ(preferred(), "0,2\n");
  ASSERT_TRUE(host.send(Hint{2, 1, 120'000, HintPolicy::Auto, "kernel test"}));
  ack = host.receiveType<Ack>(kStepMs);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->applied, (CpuSet{0})) << "hints keep working after the hotplug";
  EXPECT_EQ(preferred(), "0\n");

  // Online again: it joins the next fold.
  ASSERT_EQ(run("echo 1 > /sys/devices/system/cpu/cpu1/online; cat /sys/devices/system/cpu/online"), "0-3\n");
  hello = host.receiveType<Hello>(kStepMs);
  ASSERT_TRUE(hello && hello->agent);
  EXPECT_EQ(hello->agent->online, CpuSet::range(0, 3));
  ASSERT_TRUE(host.send(Hint{3, 2, 120'000, HintPolicy::Auto, "kernel test"}));
  const auto third = host.receiveUntil(
      [](const vcpufold::protocol::Message& message) {
        const auto* answer = std::get_if<Ack>(&message);
        return answer && answer->seq == 3;
      },
      kStepMs);
  ASSERT_TRUE(third);
  EXPECT_EQ(std::get<Ack>(*third).applied, CpuSet::range(0, 1));
  EXPECT_EQ(preferred(), "0-1\n");
  const std::string log = run("cat /tmp/kt/agent.log");
  EXPECT_NE(log.find("CPU hotplug"), std::string::npos) << log;
  EXPECT_EQ(log.find("quarantin"), std::string::npos) << "the knob was never quarantined\n" << log;
  run("kill $(cat /tmp/kt/agent.pid); i=0; while kill -0 $(cat /tmp/kt/agent.pid) 2>/dev/null && [ $i -lt 100 ]; do "
      "sleep 0.1; i=$((i+1)); done");
  EXPECT_EQ(preferred(), "0-3\n");
}

TEST_F(PatchedKernel, HackbenchCompletesFoldedAndUnfolded) {
  for (const char* mask : {"0", ""}) {
    ASSERT_EQ(write(mask), "rc=0\n");
    const auto started = std::chrono::steady_clock::now();
    const std::string said = run("hackbench -g 2 -l 50 2>&1; echo rc=$?");
    EXPECT_NE(said.find("Time:"), std::string::npos) << said;
    EXPECT_NE(said.find("rc=0"), std::string::npos) << said;
    const auto time = said.find("Time:");
    std::printf("hackbench -g 2 -l 50 with preferred '%s': %s, %.1f s with the control port\n", *mask ? mask : "all",
                time == std::string::npos ? "?" : said.substr(time, said.find('\n', time) - time).c_str(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
}
