// SPDX-License-Identifier: GPL-2.0-or-later
// The real vcpufold-hostd binary with its QMP backend, against processes that
// look like VMs (real threads, a real QMP socket) and the real vcpufold-agent
// on unix-listen beside each: hint, ack and status round trips, the metrics
// page, the status command, and what happens when hostd stops.

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "child_process.h"
#include "emulated_guest.h"
#include "fixture_tree.h"
#include "notify_socket.h"
#include "unix_socket.h"

using vcpufold::testing::runShell;
using vcpufold::testing::waitUntil;

using vcpufold::testing::ChildProcess;
using vcpufold::testing::EmulatedGuest;
using vcpufold::testing::FixtureTree;
using vcpufold::testing::freeLoopbackPort;
using vcpufold::testing::httpGet;
using vcpufold::testing::startEmulatedGuest;

TEST(HostdIntegration, QmpVmsWithRealAgents) {
  FixtureTree work("");
  const std::string dir = work.root().string();
  // Four busy vCPU threads per VM: 8 on this machine's pCPUs is contention.
  std::vector<EmulatedGuest> running;
  std::vector<FixtureTree*> guests;
  for (const char* vm : {"vm1", "vm2"}) {
    running.push_back(startEmulatedGuest(dir, vm, "4"));
    guests.push_back(running.back().tree.get());
  }
  ASSERT_TRUE(waitUntil(
      [&] {
        return work.fs().exists("/vm1.qmp") && work.fs().exists("/vm2.hint.sock") && work.fs().exists("/vm2.qmp") &&
               work.fs().exists("/vm1.hint.sock");
      },
      5000));
  const int port = freeLoopbackPort();
  work.write("/hostd.toml",
             "[hostd]\ninterval_ms = 300\nttl_ticks = 3\n[inventory]\nbackend = "
             "\"qmp\"\nqmp_directory = \"" +
                 dir + "\"\n[metrics]\naddress = \"127.0.0.1:" + std::to_string(port) + "\"\n[control]\nsocket = \"" +
                 dir + "/hostd.sock\"\n");
  auto hostd = std::make_unique<ChildProcess>(
      VCPUFOLD_HOSTD_BINARY, std::vector<std::string>{"--config", dir + "/hostd.toml"}, dir + "/hostd.log");

  // Both agents fold to the hinted single vCPU, seen in their guest trees.
  const auto folded = [&] {
    return guests[0]->read("/sys/fs/cgroup/system.slice/cpuset.cpus") == "0" &&
           guests[1]->read("/sys/fs/cgroup/system.slice/cpuset.cpus") == "0";
  };
  EXPECT_TRUE(waitUntil(folded, 10'000)) << runShell("cat " + dir + "/hostd.log");

  // The metrics page: hints, the applied CPUs from the acks, cooperation,
  // delay.
  std::string metrics;
  ASSERT_TRUE(waitUntil(
      [&] {
        metrics = httpGet(port, "/metrics");
        return metrics.find("vcpufold_vm_applied_cpus{vm=\"vm2\"} 1") != std::string::npos;
      },
      5000))
      << metrics;
  EXPECT_NE(metrics.find("HTTP/1.1 200 OK"), std::string::npos);
  for (const char* line : {"vcpufold_vm_hint_vcpus{vm=\"vm1\"} 1", "vcpufold_vm_agent_cooperative{vm=\"vm1\"} 1",
                           "vcpufold_contention 1", "# TYPE vcpufold_tick_duration_seconds histogram",
                           "vcpufold_vm_hints_sent_total{vm=\"vm1\"}", "vcpufold_vm_delay_ratio{vm=\"vm1\"} 0."})
    EXPECT_NE(metrics.find(line), std::string::npos) << line << "\n" << metrics;
  EXPECT_NE(httpGet(port, "/other").find("404"), std::string::npos);

  // A scrape loop from 50 connections costs hostd a copy per request, not a
  // render: at most one page per decision, whatever the requests.
  const auto value = [](const std::string& page, const std::string& name) {
    const auto at = page.find("\n" + name + " ");
    return at == std::string::npos ? -1.0 : std::stod(page.substr(at + name.size() + 2));
  };
  const auto decisionsOf = [&](const std::string& page) {
    return value(page, "vcpufold_ticks_total") + value(page, "vcpufold_event_decisions_total");
  };
  const std::string before = httpGet(port, "/metrics");
  std::vector<std::thread> scrapers;
  std::atomic<int> served{0};
  for (int i = 0; i < 50; ++i)
    scrapers.emplace_back([&] {
      for (int k = 0; k < 20; ++k) served += httpGet(port, "/metrics").find("200 OK") != std::string::npos ? 1 : 0;
    });
  for (auto& scraper : scrapers) scraper.join();
  const std::string after = httpGet(port, "/metrics");
  EXPECT_GE(served.load(), 100) << "the loop scraped (the cap of 32 may close some of the 50)";
  const double rendered = value(after, "vcpufold_text_pages_rendered_total") -
                          value(before, "vcpufold_text_pages_rendered_total");
  const double decided = decisionsOf(after) - decisionsOf(before);
  ASSERT_GE(value(before, "vcpufold_text_pages_rendered_total"), 1.0) << before;
  EXPECT_LE(rendered, decided + 1) << served.load() << " pages served, " << decided << " decisions";
  EXPECT_NE(after.find("vcpufold_vm_hint_vcpus{vm=\"vm1\"} 1"), std::string::npos) << after;

  // The status command prints one row per VM; status reports come from the
  // agents.
  const std::string status = runShell(std::string(VCPUFOLD_HOSTD_BINARY) + " --config " + dir + "/hostd.toml status");
  EXPECT_NE(status.find("contention"), std::string::npos) << status;
  for (const char* vm : {"vm1 ", "vm2 "}) EXPECT_NE(status.find(vm), std::string::npos) << status;
  EXPECT_NE(status.find("ready"), std::string::npos) << status;
  EXPECT_NE(status.find("host"), std::string::npos) << "the agents report host control\n" << status;

  // hostd stops: hints stop, leases run out, the agents fall back (steal is 0
  // in their trees, so the fallback unfolds them).
  hostd->signal(SIGTERM);
  EXPECT_EQ(hostd->waitExit(5000), 0);
  EXPECT_TRUE(waitUntil([&] { return guests[0]->read("/sys/fs/cgroup/system.slice/cpuset.cpus") == "\n"; }, 5000))
      << "the lease never ran out";
  const std::string hostdLog = runShell("cat " + dir + "/hostd.log");
  // Until its first acknowledgement an agent is hinted all its vCPUs; then it
  // folds for contention. Whether in one step or through 2 depends on whether
  // its neighbour's first status (demand 0: its tree's /proc/stat is still)
  // came before or after that decision's samples began, which is timing.
  EXPECT_NE(hostdLog.find("vm1: hint none -> 4: agent has not acknowledged"), std::string::npos) << hostdLog;
  EXPECT_TRUE(hostdLog.find("vm1: hint 4 -> 1: contention") != std::string::npos ||
              hostdLog.find("vm1: hint 4 -> 2: contention") != std::string::npos)
      << hostdLog;
  EXPECT_NE(hostdLog.find("SIGTERM"), std::string::npos);
}

TEST(HostdIntegration, SighupReloadsTheConfigurationOrKeepsTheRunningOne) {
  FixtureTree work("");
  const std::string dir = work.root().string();
  const auto config = [&](const std::string& hostd) {
    work.write("/hostd.toml", "[hostd]\n" + hostd + "[inventory]\nbackend = \"qmp\"\nqmp_directory = \"" + dir +
                                  "\"\n[metrics]\naddress = \"\"\n[control]\nsocket = \"" + dir + "/hostd.sock\"\n");
  };
  config("interval_ms = 300\n");
  ChildProcess hostd(VCPUFOLD_HOSTD_BINARY, {"--config", dir + "/hostd.toml"}, dir + "/hostd.log");
  const auto log = [&] { return runShell("cat " + dir + "/hostd.log"); };
  ASSERT_TRUE(waitUntil([&] { return work.fs().exists("/hostd.sock"); }, 5000)) << log();
  config("interval_ms = 500\nunfold_delay_ticks = 5\n");
  hostd.signal(SIGHUP);
  EXPECT_TRUE(waitUntil(
      [&] {
        return log().find("configuration reloaded: applied hostd.interval_ms, hostd.unfold_delay_ms; in force: tick "
                          "500 ms") != std::string::npos;
      },
      5000))
      << log();
  // Keys that need new sockets or inventories are named, not dropped.
  work.write("/hostd.toml", "[hostd]\ninterval_ms = 500\nunfold_delay_ticks = 5\n[inventory]\nbackend = \"qmp\"\n"
                            "qmp_directory = \"" + dir + "\"\nqmp_socket_owner = \"root\"\n[metrics]\naddress = "
                            "\"127.0.0.1:0\"\n[control]\nsocket = \"" + dir + "/hostd.sock\"\n");
  hostd.signal(SIGHUP);
  EXPECT_TRUE(waitUntil(
      [&] {
        return log().find("nothing it can change at run time changed; in force: tick 500 ms") != std::string::npos &&
               log().find("changed but kept as running until a restart: inventory.qmp_socket_owner, "
                          "metrics.address") != std::string::npos;
      },
      5000))
      << log();
  config("interval_ms = 5\n");
  hostd.signal(SIGHUP);
  EXPECT_TRUE(waitUntil([&] { return log().find("configuration refused") != std::string::npos; }, 5000)) << log();
  EXPECT_TRUE(hostd.running()) << "a bad file on SIGHUP does not stop hostd";
  config("interval_ms = 500\n");
  EXPECT_NE(runShell(std::string(VCPUFOLD_HOSTD_BINARY) + " --config " + dir + "/hostd.toml status").find("pool"),
            std::string::npos);
  hostd.signal(SIGTERM);
  EXPECT_EQ(hostd.waitExit(5000), 0);
}

TEST(HostdIntegration, UnderSystemdItFeedsTheWatchdogWhateverItsTick) {
  // A tick of a minute is longer than the unit's WatchdogSec=30s: the pings
  // keep their own time (half of WATCHDOG_USEC) on the control thread.
  FixtureTree work("");
  const std::string dir = work.root().string();
  work.write("/hostd.toml", "[hostd]\ninterval_ms = 60000\n[inventory]\nbackend = \"qmp\"\nqmp_directory = \"" + dir +
                                "\"\n[metrics]\naddress = \"\"\n[control]\nsocket = \"" + dir + "/hostd.sock\"\n");
  vcpufold::testing::NotifySocket notify(dir + "/notify.sock");
  ::setenv("NOTIFY_SOCKET", notify.path().c_str(), 1);
  ::setenv("WATCHDOG_USEC", "1000000", 1);
  ChildProcess hostd(VCPUFOLD_HOSTD_BINARY, {"--config", dir + "/hostd.toml"}, dir + "/hostd.log");
  ::unsetenv("NOTIFY_SOCKET");
  ::unsetenv("WATCHDOG_USEC");
  EXPECT_TRUE(waitUntil([&] { return notify.count("READY=1") == 1; }, 5000));
  EXPECT_TRUE(waitUntil([&] { return notify.count("WATCHDOG=1") >= 5; }, 5000))
      << "about two pings a second; seen " << notify.count("WATCHDOG=1");
  hostd.signal(SIGTERM);
  EXPECT_EQ(hostd.waitExit(5000), 0);
}

TEST(HostdIntegration, AVmThatLeavesAndComesBackIsNewToTheLogs) {
  // What hostd logged about a VM is forgotten when the VM goes, so the maps do
  // not grow with every VM ever seen and a VM of the same name later is new.
  FixtureTree work("");
  const std::string dir = work.root().string();
  FixtureTree guest("lab-guest-4vcpu");
  guest.write("/sys/fs/cgroup/cgroup.procs", "");
  guest.write("/sys/fs/cgroup/system.slice/cpuset.cpus", "\n");
  const auto startVm = [&] {
    return std::make_unique<ChildProcess>(
        VCPUFOLD_EMULATED_VM,
        std::vector<std::string>{"--name", "vm1", "--dir", dir, "--vcpus", "4", "--seconds", "60"},
        dir + "/vm1.vm.log");
  };
  auto vm = startVm();
  ChildProcess agent(VCPUFOLD_AGENT_BINARY,
                     {"--root", guest.root().string(), "--port", "unix-listen:" + dir + "/vm1.hint.sock"},
                     dir + "/vm1.agent.log");
  ASSERT_TRUE(waitUntil([&] { return work.fs().exists("/vm1.qmp") && work.fs().exists("/vm1.hint.sock"); }, 5000));
  work.write("/hostd.toml", "[hostd]\ninterval_ms = 200\n[inventory]\nbackend = \"qmp\"\nqmp_directory = \"" + dir +
                                "\"\n[metrics]\naddress = \"\"\n[control]\nsocket = \"" + dir + "/hostd.sock\"\n");
  ChildProcess hostd(VCPUFOLD_HOSTD_BINARY, {"--config", dir + "/hostd.toml"}, dir + "/hostd.log");
  const auto log = [&] { return runShell("cat " + dir + "/hostd.log"); };
  const auto count = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  ASSERT_TRUE(waitUntil([&] { return count(log(), "vm1: hint none -> 4") == 1; }, 10'000)) << log();
  vm.reset();  // the VM goes away: its QMP socket and threads vanish
  ASSERT_TRUE(waitUntil([&] { return log().find("vm1: gone") != std::string::npos; }, 10'000)) << log();
  vm = startVm();
  EXPECT_TRUE(waitUntil([&] { return count(log(), "vm1: hint none -> 4") == 2; }, 10'000))
      << "the VM that came back was logged as new\n"
      << log();
}
