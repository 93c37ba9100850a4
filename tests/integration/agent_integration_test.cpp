// SPDX-License-Identifier: GPL-2.0-or-later
// The real vcpufold-agent binary on a unix-listen socket, with --root on a
// copy of a captured guest tree, driven by a test host. Every wait is bounded.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

#include "channel_client.h"
#include "child_process.h"
#include "fixture_tree.h"
#include "notify_socket.h"
#include "unix_socket.h"
#include "vcpufold/protocol/cpulist.h"
#include "vcpufold/protocol/limits.h"

using vcpufold::testing::waitUntil;

using namespace vcpufold::protocol;
using vcpufold::testing::ChannelClient;
using vcpufold::testing::ChildProcess;
using vcpufold::testing::FixtureTree;

namespace {

constexpr int kWaitMs = 5000;
constexpr const char* kSystemSliceCpus = "/sys/fs/cgroup/system.slice/cpuset.cpus";
constexpr const char* kStateFile = "/run/vcpufold/cpuset-state.json";

class AgentIntegration : public ::testing::Test {
 protected:
  void SetUp() override {
    // Folding itself is under test here, whatever the fixture kernel's class default (kernel_class.h).
    tree_.write("/etc/vcpufold/agent.toml", "[agent]\nfold = \"always\"\ninterval_ms = 200\nsample_ms = 50\n");
    tree_.write("/sys/fs/cgroup/cgroup.procs",
                "");  // no user tasks in the root cgroup
    tree_.write(kSystemSliceCpus, "\n");
    socket_ = (tree_.root() / "agent.sock").string();
    logFile_ = (tree_.root() / "agent.log").string();
  }

  std::unique_ptr<ChildProcess> startAgent() {
    return std::make_unique<ChildProcess>(VCPUFOLD_AGENT_BINARY,
                                          std::vector<std::string>{"--root", tree_.root().string(), "--port",
                                                                   "unix-listen:" + socket_, "--log-level", "debug"},
                                          logFile_);
  }

  // Connects and consumes the agent's hello.
  Hello connect(ChannelClient& host) {
    EXPECT_TRUE(host.connect(socket_, kWaitMs)) << "agent did not listen";
    auto hello = host.receiveType<Hello>(kWaitMs);
    EXPECT_TRUE(hello) << "no hello from the agent";
    // The agent discards what it reads up to 0xFF or a newline after its
    // port opens; a host's hello starts with 0xFF, here it comes alone.
    EXPECT_TRUE(host.sendRaw(std::string(1, kResyncByte)));
    return hello.value_or(Hello{});
  }

  std::string cpusetCpus() const { return tree_.read(kSystemSliceCpus); }

  // Starts an agent, connects, and folds it to one CPU (acknowledged).
  std::unique_ptr<ChildProcess> startFoldedToOneCpu(ChannelClient& host) {
    auto agent = startAgent();
    connect(host);
    EXPECT_TRUE(host.send(Hint{1, 1, 3000, HintPolicy::Auto, "integration test"}));
    EXPECT_TRUE(host.receiveType<Ack>(kWaitMs));
    EXPECT_EQ(cpusetCpus(), "0");
    return agent;
  }

  FixtureTree tree_{"lab-guest-4vcpu"};
  std::string socket_;
  std::string logFile_;
};

Hint hint(std::uint64_t seq, std::uint32_t vcpus, std::uint32_t ttlMs = 3000) {
  return Hint{seq, vcpus, ttlMs, HintPolicy::Auto, "integration test"};
}

}  // namespace

TEST_F(AgentIntegration, HelloHintsErrorsAndCleanStop) {
  auto agent = startAgent();
  ChannelClient host;
  const Hello hello = connect(host);
  EXPECT_EQ(hello.role, Role::Agent);
  ASSERT_TRUE(hello.agent);
  EXPECT_EQ(hello.agent->online, CpuSet::range(0, 3));
  EXPECT_EQ(hello.agent->actuators, (std::vector<Actuator>{Actuator::Cpuset, Actuator::None}));
  EXPECT_EQ(hello.versions, (std::vector<std::uint32_t>{1}));

  // A host hello is answered with the agent's hello.
  ASSERT_TRUE(host.send(Hello{Role::Host, {1}, "test-host", std::nullopt}));
  ASSERT_TRUE(host.receiveType<Hello>(kWaitMs));

  // Valid hint: acked with the applied CPUs, written to the cgroup.
  ASSERT_TRUE(host.send(hint(1, 2)));
  auto ack = host.receiveType<Ack>(kWaitMs);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->seq, 1u);
  EXPECT_EQ(ack->applied, (CpuSet{0, 1}));
  EXPECT_EQ(ack->actuator, Actuator::Cpuset);
  EXPECT_EQ(cpusetCpus(), "0-1");
  EXPECT_TRUE(tree_.fs().exists(kStateFile));

  // Out of range: an error naming the field and the seq; nothing changes.
  ASSERT_TRUE(host.sendRaw(R"({"v":1,"type":"hint","seq":2,"vcpus":0,"ttl_ms":3000,"policy":"auto","reason":"r"})"
                           "\n"));
  auto error = host.receiveType<ErrorMessage>(kWaitMs);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->seq, 2u);
  EXPECT_NE(error->reason.find("hint.vcpus"), std::string::npos) << error->reason;
  EXPECT_EQ(cpusetCpus(), "0-1");

  // Malformed bytes and an unknown type: errors, no change.
  ASSERT_TRUE(host.sendRaw("this is not json\n"));
  error = host.receiveType<ErrorMessage>(kWaitMs);
  ASSERT_TRUE(error);
  EXPECT_FALSE(error->seq);
  ASSERT_TRUE(host.sendRaw(R"({"v":1,"type":"reboot","seq":3})"
                           "\n"));
  error = host.receiveType<ErrorMessage>(kWaitMs);
  ASSERT_TRUE(error);
  EXPECT_NE(error->reason.find("type"), std::string::npos);
  // A 1 MiB line is dropped and reported; the agent still serves hints after
  // it.
  ASSERT_TRUE(host.sendRaw(std::string(1 << 20, 'x') + "\n"));
  error = host.receiveType<ErrorMessage>(kWaitMs);
  ASSERT_TRUE(error);
  EXPECT_NE(error->reason.find("longer"), std::string::npos) << error->reason;
  EXPECT_EQ(cpusetCpus(), "0-1");

  // Above all CPUs: clamped, and the ack says what was applied.
  ASSERT_TRUE(host.send(hint(4, 99)));
  ack = host.receiveType<Ack>(kWaitMs);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->applied, CpuSet::range(0, 3));
  EXPECT_EQ(cpusetCpus(), "\n") << "all CPUs: the restriction is removed, not rewritten";
  EXPECT_FALSE(tree_.fs().exists(kStateFile));

  // Status every interval, reporting host control.
  auto status = host.receiveType<Status>(kWaitMs);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->intervalMs, 200u);
  EXPECT_EQ(status->control, Control::Host);
  // Demand is the guest's runnable tasks (/proc/loadavg's running count)
  // less the agent itself: the fixture's 1 is none, and four runnable become
  // three.
  EXPECT_DOUBLE_EQ(status->demand, 0.0);
  std::string loadavg = tree_.read("/proc/loadavg");
  const auto running = loadavg.find(" 1/");
  ASSERT_NE(running, std::string::npos) << loadavg;
  loadavg.replace(running, 3, " 4/");
  tree_.write("/proc/loadavg", loadavg);
  bool sawThree = false;
  for (int i = 0; i < 10 && !sawThree; ++i) {
    status = host.receiveType<Status>(kWaitMs);
    ASSERT_TRUE(status);
    sawThree = status->demand == 3.0;
  }
  EXPECT_TRUE(sawThree) << "last demand " << status->demand;

  // SIGTERM: unfold, exit 0, no state left.
  ASSERT_TRUE(host.send(hint(5, 1)));
  ASSERT_TRUE(host.receiveType<Ack>(kWaitMs));
  EXPECT_EQ(cpusetCpus(), "0");
  agent->signal(SIGTERM);
  EXPECT_EQ(agent->waitExit(kWaitMs), 0);
  EXPECT_EQ(cpusetCpus(), "\n") << "left folded";
  EXPECT_FALSE(tree_.fs().exists(kStateFile));
}

TEST_F(AgentIntegration, ExpiredLeaseHandsOverToTheFallback) {
  auto agent = startAgent();
  ChannelClient host;
  connect(host);
  ASSERT_TRUE(host.send(hint(1, 1, 300)));
  auto ack = host.receiveType<Ack>(kWaitMs);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->applied, (CpuSet{0}));
  // Within ttl plus one interval (300 + 200 ms, bounded here by 2 s) the
  // fallback decides; steal is 0 in the fixture, so it unfolds a core a step.
  const auto start = std::chrono::steady_clock::now();
  auto status = host.receiveUntil(
      [](const Message& m) {
        return std::holds_alternative<Status>(m) && std::get<Status>(m).control == Control::Fallback;
      },
      2000);
  ASSERT_TRUE(status) << "fallback did not take over";
  EXPECT_LE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1000));
  EXPECT_TRUE(waitUntil([&] { return cpusetCpus() == "\n"; }, 3000)) << "fallback never unfolded: " << cpusetCpus();
}

// Once a pass finds the fold in place, the same fold goes to the actuator
// again only every ten intervals (2 s here), however often the interval and
// lease renewals ask (fold_recheck.h): on a folded guest each pass runs on a
// vCPU the guest does not prefer. What someone else changes meanwhile is put
// back by the next pass.
TEST_F(AgentIntegration, TheSameFoldIsCheckedInFullEveryTenIntervalsOnceInPlace) {
  auto agent = startAgent();
  ChannelClient host;
  connect(host);
  ASSERT_TRUE(host.send(hint(1, 1, 30'000)));
  ASSERT_TRUE(host.receiveType<Ack>(kWaitMs));
  const std::string inPlace = "the fold onto 0 is in place";
  const auto passes = [&] {
    const std::string log = tree_.read("/agent.log");
    int count = 0;
    for (auto at = log.find(inPlace); at != std::string::npos; at = log.find(inPlace, at + 1)) ++count;
    return count;
  };
  ASSERT_TRUE(waitUntil([&] { return passes() >= 1; }, kWaitMs)) << tree_.read("/agent.log");
  const int before = passes();
  // 15 intervals and 15 lease renewals, each answered with the fold in force.
  for (std::uint64_t seq = 2; seq < 17; ++seq) {
    ASSERT_TRUE(host.send(hint(seq, 1, 30'000)));
    auto ack = host.receiveType<Ack>(kWaitMs);
    ASSERT_TRUE(ack);
    EXPECT_EQ(ack->seq, seq);
    EXPECT_EQ(ack->applied, (CpuSet{0}));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  // 3 s: one or two passes (each 2 s after the last quiet one), not 30.
  const int during = passes() - before;
  EXPECT_GE(during, 1) << tree_.read("/agent.log");
  EXPECT_LE(during, 3) << tree_.read("/agent.log");

  tree_.write(kSystemSliceCpus, "0-3\n");  // someone else widens a folded cgroup
  EXPECT_TRUE(waitUntil([&] { return cpusetCpus() == "0"; }, kWaitMs)) << "never put back: " << cpusetCpus();
  EXPECT_NE(tree_.read("/agent.log").find("re-applied 0 via cpuset"), std::string::npos) << tree_.read("/agent.log");
}

// A fold's cgroup step can wait seconds for a loaded guest's kernel (on
// stock 6.1 each cpuset write waits for an RCU grace period; one fold took
// 4.5 s, and hostd unfolded the guest as overdue). Here a cgroup's
// cpuset.cpus.partition, which the fold reads before it takes the cgroup on,
// is a FIFO, so the step waits until the test lets it go on: meanwhile every
// hint is answered within a second with the CPUs in force and actuator none;
// once the fold is made, the newest hint that asked for it is answered again
// with it, and a change asked for meanwhile follows.
TEST_F(AgentIntegration, AFoldTheKernelIsSlowToMakeIsAnsweredWithTheCpusInForceThenWithTheFold) {
  const std::string fifo = (tree_.root() / "sys/fs/cgroup/system.slice/cpuset.cpus.partition").string();
  (void)::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);

  auto agent = startAgent();
  ChannelClient host;
  connect(host);
  for (std::uint64_t seq = 1; seq <= 3; ++seq) {
    const auto sent = std::chrono::steady_clock::now();
    ASSERT_TRUE(host.send(hint(seq, 1, 30'000)));
    const auto ack = host.receiveType<Ack>(2500);
    ASSERT_TRUE(ack) << "hint seq " << seq << " unanswered while the step waits\n" << tree_.read("/agent.log");
    EXPECT_LT(std::chrono::steady_clock::now() - sent, std::chrono::milliseconds(1500));
    EXPECT_EQ(ack->seq, seq);
    EXPECT_EQ(ack->applied, CpuSet::range(0, 3)) << "answered with a fold that is not made";
    EXPECT_EQ(ack->actuator, Actuator::None);
  }
  // The host changes its mind meanwhile: answered at once as well; the
  // unfold waits for the fold the kernel is making, then follows it.
  ASSERT_TRUE(host.send(hint(4, 4, 30'000)));
  const auto unfoldAnswered = host.receiveType<Ack>(1500);
  ASSERT_TRUE(unfoldAnswered) << tree_.read("/agent.log");
  EXPECT_EQ(unfoldAnswered->seq, 4u);
  EXPECT_EQ(unfoldAnswered->applied, CpuSet::range(0, 3));
  EXPECT_EQ(unfoldAnswered->actuator, Actuator::None);
  EXPECT_EQ(cpusetCpus(), "\n") << "folded while the step waits";
  EXPECT_NE(tree_.read("/agent.log").find("has not made the change to 0 within 500 ms"), std::string::npos)
      << tree_.read("/agent.log");

  // The kernel goes on: the agent, blocked opening the FIFO to read it, reads
  // "member" (an ordinary cgroup) and folds it.
  int writer = -1;
  ASSERT_TRUE(waitUntil(
      [&] {
        writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        return writer >= 0;
      },
      kWaitMs))
      << "the agent never read the cgroup's partition\n"
      << tree_.read("/agent.log");
  ASSERT_EQ(::write(writer, "member\n", 7), 7);
  ::close(writer);
  const auto folded = host.receiveType<Ack>(kWaitMs);
  ASSERT_TRUE(folded) << "the fold made was not answered\n" << tree_.read("/agent.log");
  EXPECT_EQ(folded->seq, 3u) << "the newest hint answered";
  EXPECT_EQ(folded->applied, CpuSet{0});
  EXPECT_EQ(folded->actuator, Actuator::Cpuset);
  const auto unfolded = host.receiveType<Ack>(kWaitMs);
  ASSERT_TRUE(unfolded) << "the unfold after it was not answered\n" << tree_.read("/agent.log");
  EXPECT_EQ(unfolded->seq, 4u);
  EXPECT_EQ(unfolded->applied, CpuSet::range(0, 3));
  EXPECT_EQ(unfolded->actuator, Actuator::Cpuset);
  EXPECT_EQ(cpusetCpus(), "\n");

  agent->signal(SIGTERM);
  EXPECT_TRUE(agent->waitExit(kWaitMs));
  EXPECT_EQ(cpusetCpus(), "\n") << "not unfolded at stop";
}

TEST_F(AgentIntegration, ALoopTheGuestDidNotRunForSecondsIsLoggedAndHintsAreAnsweredAfterIt) {
  ChannelClient host;
  auto agent = startFoldedToOneCpu(host);
  // SIGSTOP stands in for a guest that does not run its agent: the loop
  // wakes every 50 ms (sample_ms) when it runs.
  agent->signal(SIGSTOP);
  ASSERT_TRUE(host.send(hint(2, 1)));
  std::this_thread::sleep_for(std::chrono::milliseconds(1600));
  EXPECT_FALSE(host.receiveType<Ack>(100)) << "a stopped agent answers nothing";
  agent->signal(SIGCONT);
  auto ack = host.receiveType<Ack>(kWaitMs);
  ASSERT_TRUE(ack) << "the hint that waited is answered once the agent runs";
  EXPECT_EQ(ack->seq, 2U);
  ASSERT_TRUE(
      waitUntil([&] { return tree_.read("/agent.log").find("the agent's loop ran ") != std::string::npos; }, kWaitMs))
      << tree_.read("/agent.log");
  const auto output = tree_.read("/agent.log");
  const auto at = output.find("the agent's loop ran ");
  const long lateMs = std::stol(output.substr(at + std::string("the agent's loop ran ").size()));
  EXPECT_GE(lateMs, 1000);
  EXPECT_LT(lateMs, 10000);
  EXPECT_NE(output.find("ms after it was due", at), std::string::npos);
  agent->signal(SIGTERM);
  EXPECT_TRUE(agent->waitExit(kWaitMs));
}

TEST_F(AgentIntegration, ReconnectingHostGetsAFreshHello) {
  auto agent = startAgent();
  ChannelClient host;
  connect(host);
  host.close();
  const Hello again = connect(host);
  EXPECT_EQ(again.role, Role::Agent);
  ASSERT_TRUE(host.send(hint(1, 2)));
  EXPECT_TRUE(host.receiveType<Ack>(kWaitMs));
}

TEST_F(AgentIntegration, SigkillThenRestoreUnfolds) {
  ChannelClient host;
  auto agent = startFoldedToOneCpu(host);
  agent->signal(SIGKILL);
  ASSERT_TRUE(agent->waitExit(kWaitMs));
  EXPECT_EQ(cpusetCpus(), "0") << "a killed agent cannot clean up";
  EXPECT_EQ(vcpufold::testing::runToCompletion(VCPUFOLD_AGENT_BINARY, {"--restore", "--root", tree_.root().string()},
                                               logFile_, kWaitMs),
            0);
  EXPECT_EQ(cpusetCpus(), "\n");
  EXPECT_FALSE(tree_.fs().exists(kStateFile));
}

TEST_F(AgentIntegration, StartRepairsWhatACrashedAgentLeft) {
  {
    auto agent = startAgent();
    ChannelClient host;
    connect(host);
    ASSERT_TRUE(host.send(hint(1, 1)));
    ASSERT_TRUE(host.receiveType<Ack>(kWaitMs));
    agent->signal(SIGKILL);
    ASSERT_TRUE(agent->waitExit(kWaitMs));
  }
  EXPECT_EQ(cpusetCpus(), "0");
  auto agent = startAgent();
  ChannelClient host;
  const Hello hello = connect(host);
  ASSERT_TRUE(hello.agent);
  EXPECT_EQ(hello.agent->preferred, CpuSet::range(0, 3));
  EXPECT_EQ(cpusetCpus(), "\n") << "start-up did not repair";
}

TEST_F(AgentIntegration, ResidentMemoryStaysSmall) {
  auto agent = startAgent();
  ChannelClient host;
  connect(host);
  for (std::uint64_t seq = 1; seq <= 20; ++seq) {
    ASSERT_TRUE(host.send(hint(seq, static_cast<std::uint32_t>(seq % 4 + 1))));
    ASSERT_TRUE(host.receiveType<Ack>(kWaitMs));
  }
  const long rss = agent->rssKib();
  RecordProperty("agent_rss_kib", static_cast<int>(rss));
  std::printf("agent RSS: %ld KiB\n", rss);
#if !defined(__SANITIZE_ADDRESS__)
  EXPECT_LT(rss, 8 * 1024) << "the agent must stay under 8 MiB";
#endif
}

TEST_F(AgentIntegration, BareMetalIsNeverFoldedByHints) {
  // The same tree without the x86 "hypervisor" flag: a physical machine.
  std::string cpuinfo = tree_.read("/proc/cpuinfo");
  for (std::size_t pos; (pos = cpuinfo.find(" hypervisor")) != std::string::npos;) cpuinfo.erase(pos, 11);
  tree_.write("/proc/cpuinfo", cpuinfo);
  auto agent = startAgent();
  ChannelClient host;
  const Hello hello = connect(host);
  ASSERT_TRUE(hello.agent);
  EXPECT_EQ(hello.agent->actuators, (std::vector<Actuator>{Actuator::None}));
  ASSERT_TRUE(host.send(hint(1, 1)));
  auto ack = host.receiveType<Ack>(kWaitMs);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->actuator, Actuator::None);
  EXPECT_EQ(ack->applied, CpuSet::range(0, 3)) << "nothing folded";
  EXPECT_EQ(cpusetCpus(), "\n") << "no cpuset written";
  EXPECT_FALSE(tree_.fs().exists(kStateFile));
  agent->signal(SIGTERM);
  EXPECT_EQ(agent->waitExit(5000), 0);
  const std::string log = tree_.read("/agent.log");
  EXPECT_NE(log.find("not a virtual machine"), std::string::npos) << log;
}

TEST_F(AgentIntegration, CpuHotplugRePlacesAndSaysHelloAgain) {
  auto agent = startAgent();
  ChannelClient host;
  connect(host);
  ASSERT_TRUE(host.send(hint(1, 4, 10'000)));
  auto ack = host.receiveType<Ack>(kWaitMs);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->applied, CpuSet::range(0, 3));

  // CPU 2 goes offline (as `echo 0 > cpu2/online` leaves sysfs): the agent
  // re-reads the topology, re-places the hint on what is online and tells the host.
  tree_.write("/sys/devices/system/cpu/online", "0-1,3\n");
  tree_.remove("/sys/devices/system/cpu/cpu2/topology");
  auto hello = host.receiveType<Hello>(kWaitMs);
  ASSERT_TRUE(hello && hello->agent);
  EXPECT_EQ(hello->agent->online, (CpuSet{0, 1, 3}));
  ack = host.receiveType<Ack>(kWaitMs);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->seq, 1u);
  EXPECT_EQ(ack->applied, (CpuSet{0, 1, 3})) << "no offline CPU in the mask";
  ASSERT_TRUE(host.send(hint(2, 2, 10'000)));
  ack = host.receiveType<Ack>(kWaitMs);
  ASSERT_TRUE(ack);
  EXPECT_TRUE(ack->applied.isSubsetOf(CpuSet{0, 1, 3}));
  EXPECT_EQ(ack->applied.size(), 2u);

  // Online again: a later hint can use it.
  tree_.write("/sys/devices/system/cpu/online", "0-3\n");
  FixtureTree original("lab-guest-4vcpu");
  tree_.write("/sys/devices/system/cpu/cpu2/topology/core_id",
              original.read("/sys/devices/system/cpu/cpu2/topology/core_id"));
  hello = host.receiveType<Hello>(kWaitMs);
  ASSERT_TRUE(hello && hello->agent);
  EXPECT_EQ(hello->agent->online, CpuSet::range(0, 3));
  ack = host.receiveType<Ack>(kWaitMs);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->seq, 2u) << "the lease's hint re-placed and acknowledged again";
  ASSERT_TRUE(host.send(hint(3, 4, 10'000)));
  ack = host.receiveType<Ack>(kWaitMs);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->seq, 3u);
  EXPECT_EQ(ack->applied, CpuSet::range(0, 3)) << "the hot-added CPU joins the fold";
  agent->signal(SIGTERM);
  EXPECT_EQ(agent->waitExit(5000), 0);
}

TEST_F(AgentIntegration, SighupReloadsTheConfigurationOrKeepsTheRunningOne) {
  auto agent = startAgent();
  ChannelClient host;
  connect(host);
  tree_.write("/etc/vcpufold/agent.toml",
              "[agent]\nfold = \"always\"\ninterval_ms = 400\nsample_ms = 50\n[fallback]\nhigh_threshold = 900\n");
  agent->signal(SIGHUP);
  EXPECT_TRUE(waitUntil(
      [&] {
        const std::string log = tree_.read("/agent.log");
        return log.find("fallback.high_threshold; in force: interval 400 ms") != std::string::npos;
      },
      kWaitMs))
      << tree_.read("/agent.log");
  // nice is applied again (the agent runs as root here, so it may go either
  // way); the actuator is named as waiting for a restart.
  tree_.write("/etc/vcpufold/agent.toml", "[agent]\nfold = \"always\"\ninterval_ms = 400\nsample_ms = 50\nnice = 7\n"
                                          "actuator = \"none\"\n[fallback]\nhigh_threshold = 900\n");
  agent->signal(SIGHUP);
  EXPECT_TRUE(waitUntil(
      [&] {
        const std::string log = tree_.read("/agent.log");
        return log.find("applied agent.nice; in force:") != std::string::npos && log.find(", nice 7") != std::string::npos &&
               log.find("kept as running until a restart: agent.actuator") != std::string::npos;
      },
      kWaitMs))
      << tree_.read("/agent.log");
  EXPECT_EQ(vcpufold::testing::runShell("ps -o nice= -L -p " + std::to_string(agent->pid()) + " | sort -u | tr -d ' \\n'"), "7")
      << "every thread of the agent runs at the reloaded nice";
  tree_.write("/etc/vcpufold/agent.toml", "[agent]\nfold = \"always\"\ninterval_ms = 5\n");
  agent->signal(SIGHUP);
  EXPECT_TRUE(
      waitUntil([&] { return tree_.read("/agent.log").find("configuration refused") != std::string::npos; }, kWaitMs));
  EXPECT_TRUE(agent->running()) << "a bad file on SIGHUP does not stop the agent";
  ASSERT_TRUE(host.send(hint(1, 2)));
  auto ack = host.receiveType<Ack>(kWaitMs);
  ASSERT_TRUE(ack) << "still serving hints";
  agent->signal(SIGTERM);
  EXPECT_EQ(agent->waitExit(5000), 0);
}

TEST_F(AgentIntegration, AGuestKernelWithoutEvidenceIsNotFoldedByAutoHintsButIsByFixedOnesAndByFoldAlways) {
  // A release that is no version: no measurement applies, so by evidence the
  // default does not fold (kernel_class.h).
  tree_.write("/proc/sys/kernel/osrelease", "homebrew\n");
  tree_.write("/etc/vcpufold/agent.toml", "[agent]\ninterval_ms = 200\nsample_ms = 50\n");  // fold at its default
  auto agent = startAgent();
  ChannelClient host;
  const Hello hello = connect(host);
  ASSERT_TRUE(hello.agent);
  EXPECT_EQ(hello.agent->kernelClass, "unknown");
  EXPECT_FALSE(hello.agent->foldsOnAutoHints);

  // An auto hint: acknowledged at once with every CPU and actuator none, nothing folded.
  ASSERT_TRUE(host.send(hint(1, 1)));
  auto ack = host.receiveType<Ack>(kWaitMs);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->seq, 1u);
  EXPECT_EQ(ack->applied, CpuSet::range(0, 3));
  EXPECT_EQ(ack->actuator, Actuator::None);
  EXPECT_NE(cpusetCpus(), "0");
  EXPECT_NE(tree_.read("/agent.log").find("acknowledged with all CPUs, not applied: guest kernel class unknown"),
            std::string::npos)
      << tree_.read("/agent.log");

  // Policy fixed is the VM owner's explicit ask: folded.
  ASSERT_TRUE(host.send(Hint{2, 1, 3000, HintPolicy::Fixed, "integration test"}));
  ack = host.receiveType<Ack>(kWaitMs);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->applied, (CpuSet{0}));
  EXPECT_EQ(ack->actuator, Actuator::Cpuset);
  EXPECT_EQ(cpusetCpus(), "0");
  // Back to auto: unfolded again, and it stays so past the fixed hint's lease (3 s).
  ASSERT_TRUE(host.send(hint(3, 1, 10'000)));
  ack = host.receiveType<Ack>(kWaitMs);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->applied, CpuSet::range(0, 3));
  EXPECT_NE(cpusetCpus(), "0");
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // three of its 200 ms intervals
  EXPECT_NE(cpusetCpus(), "0") << tree_.read("/agent.log");

  // fold = "always" on reload: the host hears a new hello, and auto hints fold.
  tree_.write("/etc/vcpufold/agent.toml", "[agent]\ninterval_ms = 200\nsample_ms = 50\nfold = \"always\"\n");
  agent->signal(SIGHUP);
  const auto again = host.receiveType<Hello>(kWaitMs);
  ASSERT_TRUE(again && again->agent) << tree_.read("/agent.log");
  EXPECT_TRUE(again->agent->foldsOnAutoHints);
  ASSERT_TRUE(host.send(hint(4, 1)));
  ack = host.receiveType<Ack>(kWaitMs);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->applied, (CpuSet{0}));
  EXPECT_EQ(ack->actuator, Actuator::Cpuset);
  EXPECT_EQ(cpusetCpus(), "0");
  agent->signal(SIGTERM);
  EXPECT_EQ(agent->waitExit(5000), 0);
}

TEST_F(AgentIntegration, ItRunsAtItsConfiguredNiceOrSaysWhyNot) {
  tree_.write("/etc/vcpufold/agent.toml", "[agent]\nfold = \"always\"\ninterval_ms = 200\nsample_ms = 50\nnice = -7\n");
  auto agent = startAgent();
  ChannelClient host;
  connect(host);  // past start-up
  // /proc/PID/stat: the 19th field is the nice value; the command name (2nd) has no spaces here.
  std::ifstream stat("/proc/" + std::to_string(agent->pid()) + "/stat");
  std::vector<std::string> fields{std::istream_iterator<std::string>(stat), {}};
  ASSERT_GT(fields.size(), 18u);
  if (::geteuid() == 0) {
    EXPECT_EQ(fields[18], "-7") << tree_.read("/agent.log");
  } else {
    EXPECT_EQ(fields[18], "0");
    EXPECT_NE(tree_.read("/agent.log").find("cannot set nice -7"), std::string::npos) << tree_.read("/agent.log");
  }
  agent->signal(SIGTERM);
  EXPECT_EQ(agent->waitExit(5000), 0);
}

TEST_F(AgentIntegration, UnderSystemdItSaysReadyAndFeedsTheWatchdogWhateverItsInterval) {
  // Its loop would wake only every 100 s for its own work: it wakes for the
  // watchdog too, at half of WATCHDOG_USEC.
  tree_.write("/etc/vcpufold/agent.toml", "[agent]\ninterval_ms = 100000\nsample_ms = 100000\n");
  vcpufold::testing::NotifySocket notify((tree_.root() / "notify.sock").string());
  ::setenv("NOTIFY_SOCKET", notify.path().c_str(), 1);
  ::setenv("WATCHDOG_USEC", "1000000", 1);
  auto agent = startAgent();
  ::unsetenv("NOTIFY_SOCKET");
  ::unsetenv("WATCHDOG_USEC");
  EXPECT_TRUE(waitUntil([&] { return notify.count("READY=1") == 1; }, kWaitMs));
  EXPECT_TRUE(waitUntil([&] { return notify.count("WATCHDOG=1") >= 5; }, kWaitMs))
      << "about two pings a second; seen " << notify.count("WATCHDOG=1") << "\n" << tree_.read("/agent.log");
  agent->signal(SIGTERM);
  EXPECT_EQ(agent->waitExit(5000), 0);
  EXPECT_EQ(notify.count("STOPPING=1"), 1u);
}

// [metrics] textfile: the file node_exporter's textfile collector reads, as
// Debian's prometheus-node-exporter reads it: checked by promtool and scraped
// from a real node_exporter while the guest is folded, then after the stop.
TEST_F(AgentIntegration, TheMetricsTextfileIsWhatNodeExporterServes) {
  constexpr const char* kNodeExporter = "/usr/bin/prometheus-node-exporter";
  constexpr const char* kTextfile = "/var/lib/prometheus/node-exporter/vcpufold.prom";
  for (const char* tool : {kNodeExporter, "/usr/bin/promtool"})
    if (::access(tool, X_OK) != 0) GTEST_SKIP() << tool << " missing (scripts/install-deps.sh installs it)";
  tree_.write("/etc/vcpufold/agent.toml",
              std::string("[agent]\nfold = \"always\"\ninterval_ms = 200\n[metrics]\ntextfile = \"") + kTextfile + "\"\n");
  tree_.write("/var/lib/prometheus/node-exporter/.keep", "");
  const std::string directory = tree_.fs().resolve("/var/lib/prometheus/node-exporter").string();
  auto agent = startAgent();
  ChannelClient host;
  connect(host);
  ASSERT_TRUE(host.send(hint(7, 2)));
  ASSERT_TRUE(host.receiveType<Ack>(kWaitMs));
  ASSERT_TRUE(waitUntil(
      [&] {
        return tree_.fs().exists(kTextfile) &&
               tree_.read(kTextfile).find("vcpufold_agent_preferred_cpus 2\n") != std::string::npos;
      },
      kWaitMs))
      << "no textfile with the folded state";
  struct stat info {};
  ASSERT_EQ(::stat(tree_.fs().resolve(kTextfile).c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0644u) << "node_exporter's user must be able to read it";
  EXPECT_EQ(vcpufold::testing::runShell("promtool check metrics < " + tree_.fs().resolve(kTextfile).string() +
                                        " 2>&1; echo \"exit $?\""),
            "exit 0\n");

  const int port = vcpufold::testing::freeLoopbackPort();
  ChildProcess nodeExporter(
      kNodeExporter,
      {"--collector.disable-defaults", "--collector.textfile", "--collector.textfile.directory=" + directory,
       "--web.listen-address=127.0.0.1:" + std::to_string(port)},
      (tree_.root() / "node-exporter.log").string());
  std::string page;
  ASSERT_TRUE(waitUntil(
      [&] {
        page = vcpufold::testing::httpGetBody(port, "/metrics");
        return page.find("vcpufold_agent_last_hint_seq 7") != std::string::npos;
      },
      kWaitMs))
      << page << vcpufold::testing::runShell("cat " + (tree_.root() / "node-exporter.log").string());
  for (const char* line :
       {"node_textfile_scrape_error 0", "vcpufold_agent_control{control=\"host\"} 1",
        "vcpufold_agent_cpu_preferred{cpu=\"0\"} 1", "vcpufold_agent_cpu_preferred{cpu=\"3\"} 0",
        "vcpufold_agent_host_connected 1", "vcpufold_agent_online_cpus 4", "vcpufold_agent_running 1"})
    EXPECT_NE(page.find(std::string("\n") + line + "\n"), std::string::npos) << line << "\n" << page;

  // The last write, as the agent stops: unfolded, not running.
  agent->signal(SIGTERM);
  ASSERT_EQ(agent->waitExit(kWaitMs), 0);
  ASSERT_TRUE(waitUntil(
      [&] {
        page = vcpufold::testing::httpGetBody(port, "/metrics");
        return page.find("\nvcpufold_agent_running 0\n") != std::string::npos;
      },
      kWaitMs))
      << page;
  for (const char* line : {"vcpufold_agent_preferred_cpus 4", "vcpufold_agent_control{control=\"none\"} 1",
                           "vcpufold_agent_host_connected 0"})
    EXPECT_NE(page.find(std::string("\n") + line + "\n"), std::string::npos) << line << "\n" << page;
}

// After a crash, --restore (the unit's ExecStopPost=) also corrects the
// textfile the killed agent left: unfolded, not running.
TEST_F(AgentIntegration, RestoreAfterACrashCorrectsTheMetricsTextfile) {
  constexpr const char* kTextfile = "/var/lib/node-exporter/vcpufold.prom";
  tree_.write("/etc/vcpufold/agent.toml",
              std::string("[agent]\nfold = \"always\"\ninterval_ms = 100\n[metrics]\ntextfile = \"") + kTextfile + "\"\n");
  tree_.write("/var/lib/node-exporter/.keep", "");
  ChannelClient host;
  auto agent = startFoldedToOneCpu(host);
  ASSERT_TRUE(waitUntil(
      [&] { return tree_.read(kTextfile).find("vcpufold_agent_preferred_cpus 1\n") != std::string::npos; }, kWaitMs));
  agent->signal(SIGKILL);
  ASSERT_TRUE(agent->waitExit(kWaitMs));
  EXPECT_NE(tree_.read(kTextfile).find("vcpufold_agent_running 1\n"), std::string::npos) << "a killed agent cannot say";
  EXPECT_EQ(vcpufold::testing::runToCompletion(VCPUFOLD_AGENT_BINARY, {"--restore", "--root", tree_.root().string()},
                                               logFile_, kWaitMs),
            0);
  const std::string text = tree_.read(kTextfile);
  for (const char* line : {"vcpufold_agent_running 0", "vcpufold_agent_preferred_cpus 4",
                           "vcpufold_agent_control{control=\"none\"} 1", "vcpufold_agent_host_connected 0"})
    EXPECT_NE(text.find(std::string(line) + "\n"), std::string::npos) << line << "\n" << text;
  EXPECT_EQ(cpusetCpus(), "\n");
}

// A textfile that cannot be written costs a warning, not the folding.
TEST_F(AgentIntegration, AnUnwritableMetricsTextfileIsLoggedOnceAndFoldingGoesOn) {
  tree_.write("/etc/vcpufold/agent.toml",
              "[agent]\nfold = \"always\"\ninterval_ms = 100\n[metrics]\ntextfile = \"/absent/vcpufold.prom\"\n");
  ChannelClient host;
  auto agent = startFoldedToOneCpu(host);
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  const std::string log = vcpufold::testing::runShell("grep -c 'metrics textfile not written' " + logFile_);
  EXPECT_EQ(log, "1\n") << vcpufold::testing::runShell("cat " + logFile_);
  ASSERT_TRUE(host.send(hint(2, 2)));
  ASSERT_TRUE(host.receiveType<Ack>(kWaitMs));
  EXPECT_EQ(cpusetCpus(), "0-1");
}

// The whole agent under --root on a tree captured from a Debian 6.12 guest:
// folded by a hint, it steers the housekeeping too, and both a clean stop and
// --restore after SIGKILL put every IRQ's affinity and the workqueue mask
// back. The parked cgroup's files are made and dropped by hand, as cgroupfs
// would on mkdir and rmdir.
TEST(AgentHousekeepingIntegration, SteeredWhileFoldedAndPutBackByStopAndByRestore) {
  FixtureTree tree{"guest-stock-6.12-housekeeping"};
  // The steering is what is tested, whatever the 6.12 class's default.
  tree.write("/etc/vcpufold/agent.toml", "[agent]\ninterval_ms = 200\nsample_ms = 50\nfold = \"always\"\n");
  tree.write("/sys/fs/cgroup/cgroup.procs", "");
  const std::string socket = (tree.root() / "agent.sock").string();
  const std::string log = (tree.root() / "agent.log").string();
  const std::string irq = "/proc/irq/24/smp_affinity_list";
  const std::string mask = "/sys/devices/virtual/workqueue/cpumask";
  const std::string parked = "/sys/fs/cgroup/vcpufold.parked";
  ASSERT_EQ(tree.read(irq), "0-3\n");
  ASSERT_EQ(tree.read(mask), "f\n");
  const auto makeParked = [&] {
    tree.write(parked + "/cpuset.cpus", "\n");
    tree.write(parked + "/cpuset.cpus.partition", "member\n");
    tree.write(parked + "/cgroup.procs", "");
  };
  const auto dropParkedFiles = [&] {
    for (const char* file : {"/cpuset.cpus", "/cpuset.cpus.partition", "/cgroup.procs"}) tree.remove(parked + file);
  };
  const auto foldedAgent = [&](ChannelClient& host) {
    auto agent = std::make_unique<ChildProcess>(
        VCPUFOLD_AGENT_BINARY,
        std::vector<std::string>{"--root", tree.root().string(), "--port", "unix-listen:" + socket, "--actuator",
                                 "cpuset", "--log-level", "debug"},
        log);
    EXPECT_TRUE(host.connect(socket, kWaitMs));
    EXPECT_TRUE(host.receiveType<Hello>(kWaitMs));
    EXPECT_TRUE(host.sendRaw(std::string(1, kResyncByte)));
    EXPECT_TRUE(host.send(hint(1, 1)));
    EXPECT_TRUE(host.receiveType<Ack>(kWaitMs));
    return agent;
  };

  makeParked();
  {
    ChannelClient host;
    auto agent = foldedAgent(host);
    // The steering follows the answer, as deferred work in slices (a step a
    // sample): wait for its last step, not its first.
    EXPECT_TRUE(waitUntil(
        [&] {
          return tree.read(parked + "/cpuset.cpus.partition") == "isolated" && tree.read(irq) == "0" &&
                 tree.read(mask) == "1";
        },
        kWaitMs))
        << tree.read("/agent.log");
    EXPECT_EQ(tree.read(irq), "0");
    EXPECT_EQ(tree.read(mask), "1");
    EXPECT_EQ(tree.read(parked + "/cpuset.cpus"), "1-3");
    EXPECT_EQ(tree.read(parked + "/cpuset.cpus.partition"), "isolated");
    dropParkedFiles();
    agent->signal(SIGTERM);
    ASSERT_TRUE(agent->waitExit(kWaitMs));
  }
  EXPECT_EQ(tree.read(irq), "0-3") << "a clean stop puts it back";
  EXPECT_EQ(tree.read(mask), "f");
  EXPECT_FALSE(tree.fs().exists(parked));
  EXPECT_FALSE(tree.fs().exists("/run/vcpufold/housekeeping-state.json"));

  makeParked();
  {
    ChannelClient host;
    auto agent = foldedAgent(host);
    EXPECT_TRUE(waitUntil([&] { return tree.read(irq) == "0"; }, kWaitMs)) << tree.read("/agent.log");
    agent->signal(SIGKILL);
    ASSERT_TRUE(agent->waitExit(kWaitMs));
  }
  EXPECT_EQ(tree.read(irq), "0") << "a killed agent cannot clean up";
  dropParkedFiles();
  EXPECT_EQ(vcpufold::testing::runToCompletion(VCPUFOLD_AGENT_BINARY, {"--restore", "--root", tree.root().string()},
                                               log, kWaitMs),
            0);
  EXPECT_EQ(tree.read(irq), "0-3");
  EXPECT_EQ(tree.read(mask), "f");
  EXPECT_FALSE(tree.fs().exists(parked));
  EXPECT_FALSE(tree.fs().exists("/run/vcpufold/housekeeping-state.json"));
}

// A step of a fold's deferred work can wait seconds for a loaded guest's
// kernel (making the parked CPUs' partition took 3.3 s on a TCG guest under
// hackbench). Here the partition file is a FIFO nobody writes, so that step
// waits for as long as the test likes: hints keep being answered meanwhile.
TEST(AgentHousekeepingIntegration, HintsAreAnsweredWhileAFoldStepWaitsForTheKernel) {
  FixtureTree tree{"guest-stock-6.12-housekeeping"};
  tree.write("/etc/vcpufold/agent.toml", "[agent]\ninterval_ms = 200\nsample_ms = 50\nfold = \"always\"\n");
  tree.write("/sys/fs/cgroup/cgroup.procs", "");
  const std::string parked = "/sys/fs/cgroup/vcpufold.parked";
  tree.write(parked + "/cpuset.cpus", "\n");
  tree.write(parked + "/cgroup.procs", "");
  const std::string partition = tree.root().string() + parked + "/cpuset.cpus.partition";
  ASSERT_EQ(::mkfifo(partition.c_str(), 0600), 0) << std::strerror(errno);
  const std::string socket = (tree.root() / "agent.sock").string();
  const std::string log = (tree.root() / "agent.log").string();

  ChannelClient host;
  auto agent = std::make_unique<ChildProcess>(
      VCPUFOLD_AGENT_BINARY,
      std::vector<std::string>{"--root", tree.root().string(), "--port", "unix-listen:" + socket, "--actuator",
                               "cpuset", "--log-level", "debug"},
      log);
  ASSERT_TRUE(host.connect(socket, kWaitMs));
  ASSERT_TRUE(host.receiveType<Hello>(kWaitMs));
  ASSERT_TRUE(host.sendRaw(std::string(1, kResyncByte)));
  ASSERT_TRUE(host.send(hint(1, 1)));
  ASSERT_TRUE(host.receiveType<Ack>(kWaitMs));

  // A writer opens a FIFO without blocking only while a reader has it open:
  // the fold's deferred step is reading the partition, and stays blocked in
  // its read while this end is open and silent.
  int writer = -1;
  ASSERT_TRUE(waitUntil(
      [&] {
        writer = ::open(partition.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        return writer >= 0;
      },
      kWaitMs))
      << "the deferred step never reached the partition\n"
      << tree.read("/agent.log");
  for (std::uint64_t seq = 2; seq <= 4; ++seq) {
    const auto sent = std::chrono::steady_clock::now();
    ASSERT_TRUE(host.send(hint(seq, 1)));
    const auto ack = host.receiveType<Ack>(2000);
    ASSERT_TRUE(ack) << "hint seq " << seq << " unanswered while the step waits\n" << tree.read("/agent.log");
    EXPECT_EQ(ack->seq, seq);
    EXPECT_EQ(ack->applied, CpuSet{0});
    EXPECT_LT(std::chrono::steady_clock::now() - sent, std::chrono::milliseconds(1000));
  }
  // Still waiting: the answers did not come from a step that had ended.
  const int stillRead = ::open(partition.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  EXPECT_GE(stillRead, 0) << "the step ended before the hints were answered";
  if (stillRead >= 0) ::close(stillRead);
  agent->signal(SIGKILL);  // a stop would wait for the step; not what is tested here
  EXPECT_TRUE(agent->waitExit(kWaitMs));
  ::close(writer);
}
