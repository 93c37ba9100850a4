// SPDX-License-Identifier: GPL-2.0-or-later
// Fault injection: the real vcpufold-hostd (QMP backend, --root over symlinks
// into the live /proc/PID and /sys, and a captured /proc/stat) with emulated VMs, while faults strike one
// after another: a QEMU monitor is mute, another never accepts, a guest
// reports demand and goes silent, a guest says hello and never acknowledges, a
// guest floods error frames, 1500 connections are held on the metrics port,
// and the host's /proc/stat is unreadable for 3 s. A well-behaved VM on an
// uncontended pool must keep its full hint, renewed every tick, throughout;
// hostd must stay bounded, show every fault, and leave nothing folded.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>

#include "child_process.h"
#include "fixture_tree.h"
#include "notify_socket.h"
#include "unix_socket.h"
#include "vcpufold/protocol/codec.h"
#include "vcpufold/protocol/frame_decoder.h"
#include "vcpufold/protocol/limits.h"

using namespace vcpufold::protocol;
using vcpufold::testing::ChildProcess;
using vcpufold::testing::connectLoopback;
using vcpufold::testing::connectUnixSocketNonBlocking;
using vcpufold::testing::FixtureTree;
using vcpufold::testing::freeLoopbackPort;
using vcpufold::testing::httpGet;
using vcpufold::testing::listenUnixSocket;
using vcpufold::testing::NotifySocket;
using vcpufold::testing::runShell;
using vcpufold::testing::waitUntil;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

constexpr int kTickMs = 300;

// A guest whose agent misbehaves on purpose, on the VM's hint socket (it
// listens, as the agent does with unix-listen and as QEMU's chardev does).
enum class Misbehaviour {
  ReportsDemandThenGoesSilent,  // acks, reports demand 4 with its first ack, then says nothing
  HelloWithoutAcks,             // says hello every 200 ms, acknowledges nothing
  FloodsErrorFrames,            // acks, and answers every hint with 300 error frames
};

class ScriptedGuest {
 public:
  ScriptedGuest(std::string path, Misbehaviour how) : path_(std::move(path)), how_(how) {
    listener_ = listenUnixSocket(path_, 1);
    thread_ = std::thread([this] { serve(); });
  }
  ~ScriptedGuest() {
    stop_ = true;
    thread_.join();
    ::close(listener_);
  }

 private:
  bool say(int fd, const std::string& bytes) { return vcpufold::testing::sendAll(fd, bytes, stop_); }

  static std::string hello() {
    const Hello hello{Role::Agent,
                      {1},
                      "scripted-agent",
                      AgentInfo{CpuSet::range(0, 3), 1, 1, {Actuator::Cpuset}, CpuSet::range(0, 3), std::nullopt, true}};
    return std::string(1, kResyncByte) + *encodeMessage(hello, 1);
  }

  void serve() {
    while (!stop_) {
      pollfd p{listener_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      talk(client);
      ::close(client);
    }
  }

  void talk(int fd) {
    FrameDecoder decoder;
    auto lastHello = Clock::now();
    char buffer[8192];
    while (!stop_) {
      const bool silent = how_ == Misbehaviour::ReportsDemandThenGoesSilent && reported_;
      if (how_ == Misbehaviour::HelloWithoutAcks && Clock::now() - lastHello > std::chrono::milliseconds(200)) {
        if (!say(fd, hello())) return;
        lastHello = Clock::now();
      }
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0) return;
      if (silent) continue;  // reads, and says nothing more (a paused guest, a killed agent)
      decoder.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
      while (auto frame = decoder.next()) {
        if (frame->kind != Frame::Kind::Line) continue;
        auto decoded = decodeMessage(frame->text);
        if (!decoded) continue;
        const auto& message = decoded.value().message;
        if (std::holds_alternative<Hello>(message)) {
          if (!say(fd, hello())) return;
        } else if (const auto* hint = std::get_if<Hint>(&message)) {
          if (how_ == Misbehaviour::HelloWithoutAcks) continue;
          std::string reply = *encodeMessage(Ack{hint->seq, CpuSet::range(0, hint->vcpus - 1), Actuator::Cpuset}, 1);
          if (how_ == Misbehaviour::ReportsDemandThenGoesSilent && sawAck_) {
            reply += *encodeMessage(Status{4.0, 0, kTickMs, CpuSet::range(0, 3), Control::Host}, 1);
            reported_ = true;
          }
          sawAck_ = true;
          if (how_ == Misbehaviour::FloodsErrorFrames)
            for (int i = 0; i < 300; ++i)
              reply += *encodeMessage(ErrorMessage{hint->seq, "flood " + std::to_string(i) + " \u202e"}, 1);
          if (!say(fd, reply)) return;
        }
      }
    }
  }

  std::string path_;
  Misbehaviour how_;
  int listener_ = -1;
  std::atomic<bool> stop_{false};
  bool sawAck_ = false;
  bool reported_ = false;
  std::thread thread_;
};

// The value of one metric line ("name{labels}"), or -1.
double metric(const std::string& page, const std::string& series) {
  const auto at = page.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(page.substr(at + series.size() + 2));
}

long statusValueKib(pid_t pid, const std::string& key) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind(key + ":", 0) == 0) return std::stol(line.substr(key.size() + 1));
  return -1;
}

long openFds(pid_t pid) {
  std::error_code error;
  long count = 0;
  for (fs::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", error), end; !error && it != end;
       it.increment(error))
    ++count;
  return count;
}

}  // namespace

TEST(HostdFaultInjection, AWellBehavedVmKeepsItsHintWhileEverythingElseFails) {
  FixtureTree work("");
  const std::string dir = work.root().string();
  std::vector<std::unique_ptr<ChildProcess>> processes;

  // The VMs: each an emulated VM (real threads, a real QMP socket).
  const std::vector<std::string> vms = {"good", "liar", "noack", "flood", "mute"};
  for (const auto& vm : vms)
    processes.push_back(
        std::make_unique<ChildProcess>(VCPUFOLD_EMULATED_VM,
                                       std::vector<std::string>{"--name", vm, "--dir", dir, "--vcpus", "4", "--busy",
                                                                vm == "good" ? "1" : "0", "--seconds", "120"},
                                       dir + "/" + vm + ".vm.log"));
  const std::size_t vmProcesses = processes.size();

  // Real agents for the good VM and the one whose monitor will go mute.
  std::map<std::string, std::unique_ptr<FixtureTree>> guests;
  for (const char* vm : {"good", "mute"}) {
    auto guest = std::make_unique<FixtureTree>("lab-guest-4vcpu");
    guest->write("/etc/vcpufold/agent.toml", "[agent]\ninterval_ms = 300\nfold = \"always\"\n");
    guest->write("/sys/fs/cgroup/cgroup.procs", "");
    guest->write("/sys/fs/cgroup/system.slice/cpuset.cpus", "\n");
    processes.push_back(std::make_unique<ChildProcess>(
        VCPUFOLD_AGENT_BINARY,
        std::vector<std::string>{"--root", guest->root().string(), "--port",
                                 "unix-listen:" + dir + "/" + vm + ".hint.sock", "--log-level", "debug"},
        dir + "/" + vm + ".agent.log"));
    guests[vm] = std::move(guest);
  }
  ScriptedGuest liar(dir + "/liar.hint.sock", Misbehaviour::ReportsDemandThenGoesSilent);
  ScriptedGuest noack(dir + "/noack.hint.sock", Misbehaviour::HelloWithoutAcks);
  ScriptedGuest flood(dir + "/flood.hint.sock", Misbehaviour::FloodsErrorFrames);

  // A monitor that never accepts: its listen queue is full.
  const int fullListener = listenUnixSocket(dir + "/full.qmp", 0);
  const int fullHint = listenUnixSocket(dir + "/full.hint.sock", 1);
  std::vector<int> queued;
  for (int i = 0; i < 4; ++i)
    if (int fd = connectUnixSocketNonBlocking(dir + "/full.qmp"); fd >= 0) queued.push_back(fd);

  for (const auto& vm : vms)
    ASSERT_TRUE(waitUntil(
        [&] { return fs::exists(dir + "/" + vm + ".qmp") && fs::exists(dir + "/" + vm + ".hint.sock"); }, 5000))
        << vm;
  // hostd asks a monitor only when it must (a VM it has not queried, a QEMU
  // restarted, and every 30 s), so this one is mute before hostd first asks:
  // every attempt waits out its deadline, with backoff, on the inventory thread.
  work.write("/mute.qmp-mute", "");

  // hostd's root: /sys as it is and each VM's /proc/PID through symlinks;
  // /proc/stat a copy of this machine's, taken once, so the test can take it
  // away, and so what else the machine runs is no load hostd sees (the
  // subject here is how hostd meets faults, not this machine's load: with the
  // live file a busy neighbour process folded the good VM).
  const fs::path root = work.root() / "hostroot";
  fs::create_directories(root / "proc");
  fs::create_directories(root / "run");
  fs::create_symlink("/sys", root / "sys");
  {
    std::ifstream live("/proc/stat");  // procfs files say size 0: read, not copied
    std::ofstream(root / "proc" / "stat.captured") << live.rdbuf();
  }
  fs::copy_file(root / "proc" / "stat.captured", root / "proc" / "stat");
  for (std::size_t i = 0; i < vmProcesses; ++i) {
    const std::string pid = std::to_string(processes[i]->pid());
    fs::create_symlink("/proc/" + pid, root / "proc" / pid);
  }
  const int port = freeLoopbackPort();
  work.write("/hostd.toml", "[hostd]\ninterval_ms = " + std::to_string(kTickMs) +
                                "\nttl_ticks = 3\nmissing_input_hold_ms = 10000\n[inventory]\nbackend = \"qmp\"\n"
                                "qmp_directory = \"" +
                                dir + "\"\n[metrics]\naddress = \"127.0.0.1:" + std::to_string(port) +
                                "\"\n[control]\nsocket = \"/run/hostd.sock\"\n");
  NotifySocket notify(dir + "/notify.sock");
  ::setenv("NOTIFY_SOCKET", (dir + "/notify.sock").c_str(), 1);
  ::setenv("WATCHDOG_USEC", "3000000", 1);
  auto hostd = std::make_unique<ChildProcess>(
      VCPUFOLD_HOSTD_BINARY,
      std::vector<std::string>{"--config", dir + "/hostd.toml", "--root", root.string(), "--log-level", "debug"},
      dir + "/hostd.log");
  ::unsetenv("NOTIFY_SOCKET");
  ::unsetenv("WATCHDOG_USEC");
  const auto hostdLog = [&] { return runShell("cat " + dir + "/hostd.log"); };
  const auto goodLog = [&] { return runShell("cat " + dir + "/good.agent.log"); };

  ASSERT_TRUE(waitUntil([&] { return goodLog().find("hint seq") != std::string::npos; }, 10'000)) << hostdLog();
  // The silent guest claims demand for its 4 idle vCPUs with its second
  // ack: the host sees it use none of them, so the claim is not counted (it
  // once made contention and folded the good VM while it was fresh).
  ASSERT_TRUE(waitUntil(
      [&] { return metric(httpGet(port, "/metrics"), "vcpufold_vm_reported_demand_discounted{vm=\"liar\"}") == 1; },
      10'000, 20))
      << hostdLog();
  std::this_thread::sleep_for(std::chrono::milliseconds(4 * kTickMs));
  EXPECT_EQ(hostdLog().find("good: hint 4 -> "), std::string::npos) << "the claim folded the good VM\n" << hostdLog();
  const std::size_t logBefore = hostdLog().size();
  const auto start = Clock::now();
  const double startMs = std::chrono::duration<double, std::milli>(start.time_since_epoch()).count();
  long worstRssKib = 0;
  long worstFds = 0;
  std::vector<int> held;
  bool flooded = false, statGone = false, statBack = false;
  while (Clock::now() - start < std::chrono::seconds(12)) {
    const double t = std::chrono::duration<double>(Clock::now() - start).count();
    if (t > 3 && !flooded) {
      for (int i = 0; i < 1500; ++i)
        if (int fd = connectLoopback(port); fd >= 0) held.push_back(fd);
      flooded = true;
    }
    if (t > 5 && !statGone) {
      fs::remove(root / "proc" / "stat");
      fs::create_symlink("/nonexistent/stat", root / "proc" / "stat");
      statGone = true;
    }
    if (t > 8 && !statBack) {
      fs::remove(root / "proc" / "stat");
      fs::copy_file(root / "proc" / "stat.captured", root / "proc" / "stat");
      statBack = true;
    }
    worstRssKib = std::max(worstRssKib, statusValueKib(hostd->pid(), "VmRSS"));
    worstFds = std::max(worstFds, openFds(hostd->pid()));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const std::string page = httpGet(port, "/metrics");
  const std::string status = runShell(std::string(VCPUFOLD_HOSTD_BINARY) + " --config " + dir + "/hostd.toml --root " +
                                      root.string() + " status");
  for (int fd : held) ::close(fd);
  const auto stopped = Clock::now();
  hostd->signal(SIGTERM);
  EXPECT_EQ(hostd->waitExit(5000), 0) << "hostd stops on SIGTERM whatever its monitors do";
  std::printf("hostd: worst RSS %ld KiB, worst open descriptors %ld, %zu metrics connections held\n", worstRssKib,
              worstFds, held.size());
  const std::string fullLog = hostdLog();
  const std::string log = fullLog.substr(logBefore);

  // The well-behaved VM: every hint it got said 4 vCPUs, one at least every 3 ticks.
  const std::string good = goodLog();
  const std::regex received(R"(hint seq \d+ \((\d+) vCPUs\) received at ([0-9.]+) ms)");
  std::vector<double> times;
  for (auto it = std::sregex_iterator(good.begin(), good.end(), received); it != std::sregex_iterator(); ++it) {
    const double at = std::stod((*it)[2].str());
    if (at < startMs) continue;
    EXPECT_EQ((*it)[1].str(), "4") << "the good VM was hinted fewer vCPUs at " << at;
    times.push_back(at);
  }
  const double windowMs = std::chrono::duration<double, std::milli>(stopped - start).count();
  ASSERT_GE(times.size(), static_cast<std::size_t>(windowMs / kTickMs * 0.8)) << good;
  double worstGap = 0;
  for (std::size_t i = 1; i < times.size(); ++i) worstGap = std::max(worstGap, times[i] - times[i - 1]);
  std::printf("good VM: %zu hints, worst gap %.0f ms\n", times.size(), worstGap);
  EXPECT_LE(worstGap, 3.0 * kTickMs) << "a renewal gap over 3 ticks";
  EXPECT_EQ(log.find("good: hint 4 -> 1"), std::string::npos) << log;
  EXPECT_EQ(log.find("good: hint 4 -> 2"), std::string::npos) << log;
  EXPECT_EQ(log.find("good: hint 4 -> 3"), std::string::npos) << log;
  EXPECT_EQ(guests["good"]->read("/sys/fs/cgroup/system.slice/cpuset.cpus"), "\n") << "the good VM is folded";

  // Bounded.
  EXPECT_LT(worstFds, 200) << "1500 held metrics connections must not cost 1500 descriptors";
  EXPECT_LT(worstRssKib, 256 * 1024);

  // Every fault is visible.
  EXPECT_NE(fullLog.find("mute.qmp: QMP: no answer within"), std::string::npos) << "the mute monitor\n" << fullLog;
  EXPECT_NE(fullLog.find("full: "), std::string::npos) << fullLog;
  EXPECT_NE(fullLog.find("accepts no connections"), std::string::npos) << "the monitor that never accepts\n" << fullLog;
  EXPECT_NE(fullLog.find("noack: hint seq"), std::string::npos) << fullLog;
  EXPECT_NE(fullLog.find("not acknowledged"), std::string::npos) << fullLog;
  EXPECT_NE(log.find("inputs missing: host CPU time"), std::string::npos) << log;
  EXPECT_NE(log.find("inputs complete again"), std::string::npos) << log;
  EXPECT_NE(log.find("suppressed"), std::string::npos) << "the flood's log lines are throttled\n" << log;
  EXPECT_EQ(log.find("\xE2\x80\xAE"), std::string::npos) << "a guest's bidi override reached the log";
  ASSERT_NE(page.find("200 OK"), std::string::npos) << "metrics served after the flood";
  EXPECT_GT(metric(page, "vcpufold_vm_agent_errors_total{vm=\"flood\"}"), 100);
  EXPECT_GT(metric(page, "vcpufold_vm_log_lines_suppressed_total{vm=\"flood\"}"), 100);
  EXPECT_EQ(metric(page, "vcpufold_vm_agent_cooperative{vm=\"noack\"}"), 0);
  EXPECT_EQ(metric(page, "vcpufold_vm_agent_status_fresh{vm=\"liar\"}"), 0);
  EXPECT_EQ(metric(page, "vcpufold_vm_hint_vcpus{vm=\"good\"}"), 4);
  EXPECT_GE(metric(page, "vcpufold_metrics_connections_evicted_total"), 1000);
  EXPECT_GT(metric(page, "vcpufold_tick_inputs_missing_total"), 0);
  EXPECT_EQ(metric(page, "vcpufold_contention"), 0) << "the silent guest's old demand did not make contention";
  EXPECT_NE(status.find("good"), std::string::npos) << status;

  // The watchdog was fed all along (half of WATCHDOG_USEC, on the control
  // thread with the ticks), the /proc/stat outage included.
  const auto messages = notify.messages();
  ASSERT_FALSE(messages.empty());
  EXPECT_NE(messages.front().second.find("READY=1"), std::string::npos);
  std::vector<Clock::time_point> pings;
  for (const auto& [when, text] : messages)
    if (text.find("WATCHDOG=1") != std::string::npos && when >= start && when <= stopped) pings.push_back(when);
  constexpr double kPingMs = 1500;  // WATCHDOG_USEC / 2
  EXPECT_GE(pings.size(), static_cast<std::size_t>(windowMs / kPingMs * 0.8));
  double worstPingGap = 0;
  for (std::size_t i = 1; i < pings.size(); ++i)
    worstPingGap = std::max(worstPingGap, std::chrono::duration<double, std::milli>(pings[i] - pings[i - 1]).count());
  EXPECT_LT(worstPingGap, 1.5 * kPingMs);

  // Nothing left folded: the good VM's lease lapses into its fallback, which
  // (no steal in its tree) keeps every CPU.
  std::this_thread::sleep_for(std::chrono::milliseconds(3 * kTickMs + 600));
  EXPECT_EQ(guests["good"]->read("/sys/fs/cgroup/system.slice/cpuset.cpus"), "\n");
  EXPECT_EQ(guests["mute"]->read("/sys/fs/cgroup/system.slice/cpuset.cpus"), "\n");
  for (int fd : queued) ::close(fd);
  ::close(fullListener);
  ::close(fullHint);
}
