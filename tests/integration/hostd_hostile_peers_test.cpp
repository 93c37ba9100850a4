// SPDX-License-Identifier: GPL-2.0-or-later
// hostd's clients and servers against peers that misbehave on purpose, on
// real sockets: QEMU monitors that lie, stream, nest, go mute or never accept,
// local users who hold the metrics port, and an inventory that hangs.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "child_process.h"
#include "unix_socket.h"
#include "vcpufold/hostd/hostd_config.h"
#include "vcpufold/hostd/inventory_worker.h"
#include "vcpufold/hostd/qmp_client.h"
#include "vcpufold/hostd/qmp_inventory.h"
#include "vcpufold/hostd/text_servers.h"

using namespace vcpufold::hostd;
using vcpufold::testing::listenUnixSocket;
using Clock = std::chrono::steady_clock;

namespace {

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// A QEMU monitor that greets, accepts qmp_capabilities, and then answers
// every command with `reply` (which may be anything at all).
class Monitor {
 public:
  using Reply = std::function<void(int fd, const std::atomic<bool>& stop)>;
  Monitor(std::string path, Reply reply, bool greet = true)
      : path_(std::move(path)), listener_(listenUnixSocket(path_, 4)), reply_(std::move(reply)), greet_(greet) {
    thread_ = std::thread([this] { serve(); });
  }
  ~Monitor() {
    stop_ = true;
    ::shutdown(listener_, SHUT_RDWR);
    thread_.join();
    ::close(listener_);
    ::unlink(path_.c_str());
  }

 private:
  // One client at a time, as QEMU's monitor serves them.
  void serve() {
    while (!stop_) {
      pollfd p{listener_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client >= 0) talk(client);
    }
  }

  void talk(int client) {
    auto say = [client](const std::string& line) { return ::send(client, line.data(), line.size(), MSG_NOSIGNAL) > 0; };
    if (greet_)
      say(R"({"QMP":{"version":{},"capabilities":[]}})"
          "\n");
    std::string pending;
    int commands = 0;
    while (!stop_) {
      pollfd c{client, POLLIN, 0};
      if (::poll(&c, 1, 20) <= 0) continue;
      char buffer[4096];
      const ssize_t n = ::recv(client, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      pending.append(buffer, static_cast<std::size_t>(n));
      while (pending.find('\n') != std::string::npos) {
        pending.erase(0, pending.find('\n') + 1);
        if (++commands == 1 && greet_)
          say(R"({"return":{}})"
              "\n");  // qmp_capabilities
        else
          reply_(client, stop_);
      }
    }
    ::close(client);
  }

  std::string path_;
  int listener_;
  Reply reply_;
  bool greet_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

Monitor::Reply answer(std::string line) {
  return [line = std::move(line)](int fd, const std::atomic<bool>&) {
    ::send(fd, line.data(), line.size(), MSG_NOSIGNAL);
  };
}

class HostilePeers : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = std::filesystem::temp_directory_path() / ("vcpufold-hostile-" + std::to_string(::getpid()));
    std::filesystem::create_directories(directory_);
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }
  std::string path(const std::string& name) const { return (directory_ / name).string(); }
  std::filesystem::path directory_;
};

TEST_F(HostilePeers, QmpRepliesOfTheWrongShapeAreErrorsNotCrashes) {
  for (const char* reply : {R"({"error":1})", R"({"error":{"desc":7}})", R"({"error":"text"})", R"([1,2,3])",
                            R"("just a string")", R"({"return":[{"cpu-index":"0","thread-id":1}]})",
                            R"({"return":[{"cpu-index":99999999999,"thread-id":1}]})", R"({"event":5})"}) {
    SCOPED_TRACE(reply);
    Monitor monitor(path("m.qmp"), answer(std::string(reply) + "\n"));
    auto client = QmpClient::connect(path("m.qmp"), 1000);
    ASSERT_TRUE(client) << client.error().message;
    const auto result = (*client)->execute(R"({"execute":"query-cpus-fast"})", 300);
    if (result) {
      // A "return" of the wrong shape reaches the strict parser, which refuses it.
      EXPECT_FALSE(parseQueryCpusJson(*result)) << *result;
    } else {
      EXPECT_FALSE(result.error().message.empty());
    }
  }
}

TEST_F(HostilePeers, AnEndlessStreamOfEventsCannotHoldACallOrMemory) {
  Monitor monitor(path("m.qmp"), [](int fd, const std::atomic<bool>& stop) {
    const std::string event = R"({"event":"VSERPORT_CHANGE","data":{"id":"x","open":true}})"
                              "\n";
    std::string burst;
    for (int i = 0; i < 100; ++i) burst += event;
    while (!stop && ::send(fd, burst.data(), burst.size(), MSG_NOSIGNAL) > 0) {
    }
  });
  auto client = QmpClient::connect(path("m.qmp"), 1000);
  ASSERT_TRUE(client) << client.error().message;
  const auto start = Clock::now();
  const auto result = (*client)->execute(R"({"execute":"query-cpus-fast"})", 300);
  EXPECT_FALSE(result);
  EXPECT_LT(msSince(start), 1000.0) << "the deadline held against the stream";
  EXPECT_GT((*client)->eventsDropped(), 0u);
  EXPECT_LE((*client)->drainEvents().size(), 64u);
}

TEST_F(HostilePeers, DeeplyNestedJsonIsRefusedWithoutRecursing) {
  Monitor monitor(path("m.qmp"), answer(std::string(500000, '[') + "\n"));
  auto client = QmpClient::connect(path("m.qmp"), 1000);
  ASSERT_TRUE(client) << client.error().message;
  const auto result = (*client)->execute(R"({"execute":"query-cpus-fast"})", 1000);
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("nested"), std::string::npos) << result.error().message;
}

TEST_F(HostilePeers, AMonitorThatNeverAcceptsFailsAtOnce) {
  // A full listen queue, as of a hung QEMU: connect() must not block.
  const int listener = listenUnixSocket(path("full.qmp"), 0);
  std::vector<int> queued;
  for (int i = 0; i < 8; ++i)
    if (const int fd = vcpufold::testing::connectUnixSocketNonBlocking(path("full.qmp")); fd >= 0) queued.push_back(fd);
  const auto start = Clock::now();
  const auto client = QmpClient::connect(path("full.qmp"), 1000);
  EXPECT_FALSE(client);
  EXPECT_LT(msSince(start), 200.0);
  if (!client) {
    EXPECT_NE(client.error().message.find("accepts no connections"), std::string::npos) << client.error().message;
  }
  for (int fd : queued) ::close(fd);
  ::close(listener);
}

TEST_F(HostilePeers, AMuteMonitorTimesOut) {
  Monitor monitor(path("mute.qmp"), answer(""), false);
  const auto start = Clock::now();
  const auto client = QmpClient::connect(path("mute.qmp"), 300);
  EXPECT_FALSE(client);
  EXPECT_GE(msSince(start), 250.0);
  EXPECT_LT(msSince(start), 1000.0);
}

// The status line of GET /metrics on 127.0.0.1:port ("" on failure).
std::string getMetrics(unsigned short port) {
  const std::string response = vcpufold::testing::httpGet(port, "/metrics");
  return response.substr(0, response.find("\r\n"));
}

TEST_F(HostilePeers, ConnectionsHeldOnTheMetricsPortAreCappedOldestFirst) {
  boost::asio::io_context io;
  auto server = MetricsServer::start(io, "127.0.0.1:0", [] { return std::string("vcpufold_up 1\n"); });
  ASSERT_TRUE(server) << server.error().message;
  const unsigned short port = (*server)->port();
  std::thread loop([&io] {
    auto guard = boost::asio::make_work_guard(io);
    io.run();
  });
  std::vector<int> held;
  for (int i = 0; i < 300; ++i)
    if (const int fd = vcpufold::testing::connectLoopback(port); fd >= 0) held.push_back(fd);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(getMetrics(port), "HTTP/1.1 200 OK") << "a new client is served while 300 are held";
  EXPECT_GE((*server)->evictedConnections(), 300u - 32u);
  // Held connections are closed by the server: after the deadline every one reads EOF.
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  std::size_t closed = 0;
  for (int fd : held) {
    char byte;
    if (::recv(fd, &byte, 1, MSG_DONTWAIT) == 0) ++closed;
    ::close(fd);
  }
  EXPECT_EQ(closed, held.size());
  io.stop();
  loop.join();
}

TEST_F(HostilePeers, ABusyMetricsPortIsAnErrorTheCallerCanRetry) {
  boost::asio::io_context io;
  auto first = MetricsServer::start(io, "127.0.0.1:0", [] { return std::string(); });
  ASSERT_TRUE(first);
  const auto second =
      MetricsServer::start(io, "127.0.0.1:" + std::to_string((*first)->port()), [] { return std::string(); });
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().message.find("in use"), std::string::npos) << second.error().message;
}

// An inventory backend that hangs in refresh() until released, as a libvirt
// call to a wedged libvirtd would.
class HangingInventory final : public Inventory {
 public:
  explicit HangingInventory(std::atomic<bool>& release) : release_(release) {}
  std::string describe() const override { return "hanging"; }
  vcpufold::Expected<std::vector<VmRecord>> refresh() override {
    while (!release_) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return std::vector<VmRecord>{};
  }
  vcpufold::Expected<std::map<std::string, VmSample>> sample() override { return std::map<std::string, VmSample>{}; }

 private:
  std::atomic<bool>& release_;
};

TEST_F(HostilePeers, AHungInventoryDelaysOnlyItsOwnThread) {
  std::atomic<bool> release{false};
  std::atomic<int> snapshots{0};
  InventoryWorker worker(std::make_unique<HangingInventory>(release), vcpufold::RootedFs("/"), "",
                         std::chrono::milliseconds(50), [&snapshots](HostSnapshot) { ++snapshots; });
  worker.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(snapshots.load(), 0);
  EXPECT_EQ(worker.activity().step, "inventory refresh");
  const auto start = Clock::now();
  EXPECT_FALSE(worker.stop(std::chrono::milliseconds(200))) << "still inside the hung call";
  EXPECT_LT(msSince(start), 500.0);
  release = true;
  EXPECT_TRUE(worker.stop(std::chrono::milliseconds(2000)));
}

TEST_F(HostilePeers, TheWorkerDeliversASnapshotEveryPeriod) {
  std::atomic<bool> release{true};
  std::atomic<int> snapshots{0};
  InventoryWorker worker(std::make_unique<HangingInventory>(release), vcpufold::RootedFs("/"), "",
                         std::chrono::milliseconds(50), [&snapshots](HostSnapshot snapshot) {
                           EXPECT_TRUE(snapshot.inventoryRead);
                           EXPECT_TRUE(snapshot.pool.has_value()) << "this host's pool";
                           EXPECT_TRUE(snapshot.cpuTicks.has_value()) << "this host's /proc/stat";
                           ++snapshots;
                         });
  worker.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(525));
  EXPECT_TRUE(worker.stop(std::chrono::milliseconds(1000)));
  EXPECT_GE(snapshots.load(), 8);
  EXPECT_LE(snapshots.load(), 12);
}

}  // namespace

namespace {

// A QMP directory entry: a monitor answering query-cpus-fast with this test's
// own thread, and a hint socket beside it.
struct DirectoryVm {
  DirectoryVm(const std::string& directory, const std::string& name)
      : monitor(directory + "/" + name + ".qmp",
                answer(R"({"return":[{"cpu-index":0,"thread-id":)" + std::to_string(::gettid()) + "}]}\n")),
        hint(listenUnixSocket(directory + "/" + name + ".hint.sock", 1)) {}
  ~DirectoryVm() { ::close(hint); }
  Monitor monitor;
  int hint;
};

std::vector<std::string> namesOf(QmpInventory& inventory) {
  std::vector<std::string> names;
  auto records = inventory.refresh();
  EXPECT_TRUE(records);
  for (const auto& record : *records) names.push_back(record.name);
  return names;
}

}  // namespace

TEST_F(HostilePeers, QmpDirectoryEntriesMustBeRealSocketsOfTrustedOwners) {
  const std::string dir = path("qmpdir");
  std::filesystem::create_directories(dir);
  DirectoryVm vm(dir, "vm1");
  {
    QmpInventory inventory(vcpufold::RootedFs("/"), dir, {});
    EXPECT_EQ(namesOf(inventory), (std::vector<std::string>{"vm1"})) << "root's own socket counts";
  }
  constexpr uid_t kNobody = 65534;
  ASSERT_EQ(::chown((dir + "/vm1.qmp").c_str(), kNobody, kNobody), 0);
  {
    QmpInventory inventory(vcpufold::RootedFs("/"), dir, {});
    EXPECT_TRUE(namesOf(inventory).empty()) << "a socket of another user does not";
    bool said = false;
    for (const auto& note : inventory.takeNotes()) said = said || note.find("owned by uid 65534") != std::string::npos;
    EXPECT_TRUE(said);
  }
  {
    QmpInventory inventory(vcpufold::RootedFs("/"), dir, {}, kNobody);
    EXPECT_EQ(namesOf(inventory), (std::vector<std::string>{"vm1"})) << "unless it is the configured QEMU user";
  }
  // A symlink pointing out of the directory never counts.
  const std::string elsewhere = path("elsewhere");
  std::filesystem::create_directories(elsewhere);
  DirectoryVm outside(elsewhere, "vm2");
  std::filesystem::create_symlink(elsewhere + "/vm2.qmp", dir + "/vm2.qmp");
  std::filesystem::create_symlink(elsewhere + "/vm2.hint.sock", dir + "/vm2.hint.sock");
  QmpInventory inventory(vcpufold::RootedFs("/"), dir, {}, kNobody);
  EXPECT_EQ(namesOf(inventory), (std::vector<std::string>{"vm1"}));
  bool said = false;
  for (const auto& note : inventory.takeNotes()) said = said || note.find("a symlink") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST_F(HostilePeers, TheQmpInventoryLeavesTheMonitorToOtherClientsBetweenQueries) {
  const std::string dir = path("qmpdir");
  std::filesystem::create_directories(dir);
  DirectoryVm vm(dir, "vm1");
  QmpInventory inventory(vcpufold::RootedFs("/"), dir, {});
  ASSERT_EQ(namesOf(inventory), (std::vector<std::string>{"vm1"}));
  bool introduced = false;
  for (const auto& note : inventory.takeNotes()) introduced = introduced || note.find("1 vCPUs") != std::string::npos;
  EXPECT_TRUE(introduced);
  // The monitor serves one client at a time, as QEMU's does: another client
  // (Proxmox's qm, say) is served at once, so hostd is not connected.
  auto other = QmpClient::connect(dir + "/vm1.qmp", 1000);
  ASSERT_TRUE(other) << other.error().message;
  EXPECT_TRUE((*other)->execute(R"({"execute":"query-cpus-fast"})", 1000)) << "the monitor answers another client";
  // While that client holds the monitor, hostd's refreshes and samples go on
  // from /proc: a connection attempt would wait out its 1 s deadline.
  const auto start = Clock::now();
  for (int cycle = 0; cycle < 3; ++cycle) {
    EXPECT_EQ(namesOf(inventory), (std::vector<std::string>{"vm1"}));
    const auto samples = inventory.sample();
    ASSERT_TRUE(samples);
    EXPECT_EQ(samples->count("vm1"), 1u);
  }
  EXPECT_LT(msSince(start), 500.0) << "no monitor call between queries";
  EXPECT_TRUE(inventory.takeNotes().empty());
}

TEST_F(HostilePeers, TwentySilentMonitorsCostARefreshOneDeadlineNotTwenty) {
  // Monitors that greet and then answer nothing: asked one after another,
  // each cost its 1 s deadline (twice: query-name, query-cpus-fast), and
  // every VM's sample waited for all of them.
  const std::string dir = path("qmpdir");
  std::filesystem::create_directories(dir);
  DirectoryVm good(dir, "good");
  std::vector<std::unique_ptr<Monitor>> mute;
  std::vector<int> hints;
  for (int i = 0; i < 20; ++i) {
    const std::string name = dir + "/mute" + std::to_string(i);
    mute.push_back(std::make_unique<Monitor>(name + ".qmp", answer("")));
    hints.push_back(listenUnixSocket(name + ".hint.sock", 1));
  }
  QmpInventory inventory(vcpufold::RootedFs("/"), dir, {});
  auto start = Clock::now();
  EXPECT_EQ(namesOf(inventory), (std::vector<std::string>{"good"}));
  EXPECT_LT(msSince(start), 2500.0) << "one deadline for all, not one per monitor";
  const auto samples = inventory.sample();
  ASSERT_TRUE(samples);
  EXPECT_EQ(samples->count("good"), 1u);
  std::size_t timeouts = 0;
  for (const auto& note : inventory.takeNotes()) timeouts += note.find("no answer within") != std::string::npos;
  EXPECT_EQ(timeouts, 20u) << "each silent monitor is named";
  // Backed off, they cost the next refresh nothing.
  start = Clock::now();
  EXPECT_EQ(namesOf(inventory), (std::vector<std::string>{"good"}));
  EXPECT_LT(msSince(start), 500.0);
  for (int fd : hints) ::close(fd);
}

TEST_F(HostilePeers, TheWorkerMeasuresOneVmsLoadBetweenItsCyclesOnRequest) {
  // Two QMP VMs whose one vCPU is a thread of this test: one spinning, one
  // asleep. A measure asked for between cycles (a 10 s period) comes back
  // within the window and tells them apart.
  const std::string dir = path("qmpdir");
  std::filesystem::create_directories(dir);
  std::atomic<bool> stop{false};
  std::atomic<pid_t> busyTid{0}, idleTid{0};
  std::thread busy([&] {
    busyTid = ::gettid();
    while (!stop) {
    }
  });
  std::thread idle([&] {
    idleTid = ::gettid();
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  });
  while (!busyTid || !idleTid) std::this_thread::yield();
  const auto vcpuAnswer = [](pid_t tid) {
    return answer(R"({"return":[{"cpu-index":0,"thread-id":)" + std::to_string(tid) + "}]}\n");
  };
  Monitor busyMonitor(dir + "/busy.qmp", vcpuAnswer(busyTid));
  Monitor idleMonitor(dir + "/idle.qmp", vcpuAnswer(idleTid));
  const int busyHint = listenUnixSocket(dir + "/busy.hint.sock", 1);
  const int idleHint = listenUnixSocket(dir + "/idle.hint.sock", 1);
  std::atomic<int> snapshots{0};
  InventoryWorker worker(std::make_unique<QmpInventory>(vcpufold::RootedFs("/"), dir, std::vector<QmpVmConfig>{}),
                         vcpufold::RootedFs("/"), "", std::chrono::milliseconds(10'000),
                         [&snapshots](HostSnapshot) { ++snapshots; });
  worker.start();
  ASSERT_TRUE(vcpufold::testing::waitUntil([&] { return snapshots.load() == 1; }, 5000));
  std::mutex mutex;
  std::map<std::string, std::optional<VmLoad>> measured;
  const auto start = Clock::now();
  for (const char* vm : {"busy", "idle", "absent"})
    worker.measureNow(vm, std::chrono::milliseconds(50), [&](const std::string& name, std::optional<VmLoad> load) {
      std::lock_guard lock(mutex);
      measured[name] = load;
    });
  ASSERT_TRUE(vcpufold::testing::waitUntil(
      [&] {
        std::lock_guard lock(mutex);
        return measured.size() == 3;
      },
      2000));
  EXPECT_LT(msSince(start), 1000.0) << "between cycles, not at the next one";
  EXPECT_EQ(snapshots.load(), 1) << "a measure is not a cycle";
  ASSERT_TRUE(measured["busy"]);
  EXPECT_GT(measured["busy"]->demandCpus, 0.75) << "a spinning vCPU thread";
  ASSERT_TRUE(measured["idle"]);
  EXPECT_LT(measured["idle"]->demandCpus, 0.25) << "a sleeping one";
  EXPECT_FALSE(measured["absent"]) << "a VM the inventory does not know";
  EXPECT_TRUE(worker.stop(std::chrono::milliseconds(2000)));
  stop = true;
  busy.join();
  idle.join();
  ::close(busyHint);
  ::close(idleHint);
}

TEST_F(HostilePeers, AnUnknownQmpSocketOwnerIsAConfigurationError) {
  const auto config = parseHostdConfig(
      "[inventory]\nbackend = \"qmp\"\nqmp_directory = \"/run/qemu-server\"\n"
      "qmp_socket_owner = \"no-such-user-here\"\n",
      "hostd.toml");
  ASSERT_FALSE(config);
  EXPECT_NE(config.error().message.find("inventory.qmp_socket_owner"), std::string::npos) << config.error().message;
  EXPECT_TRUE(parseHostdConfig("[inventory]\nqmp_socket_owner = \"nobody\"\n", "hostd.toml"));
}

TEST_F(HostilePeers, TheUnfoldDelayIsTimeAndItsOlderFormInTicksIsStillRead) {
  auto config = parseHostdConfig("[hostd]\nunfold_delay_ms = 2500\n", "hostd.toml");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->unfoldDelayMs, 2500u);
  config = parseHostdConfig("[hostd]\ninterval_ms = 500\nunfold_delay_ticks = 4\n", "hostd.toml");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->unfoldDelayMs, 2000u) << "4 ticks of 500 ms";
  EXPECT_EQ(parseHostdConfig("", "hostd.toml")->unfoldDelayMs, 1000u);
  for (const char* bad : {"unfold_delay_ms = 1000\nunfold_delay_ticks = 3\n", "unfold_delay_ms = 600001\n",
                          "unfold_delay_ticks = 101\n"}) {
    const auto refused = parseHostdConfig(std::string("[hostd]\n") + bad, "hostd.toml");
    ASSERT_FALSE(refused) << bad;
    EXPECT_NE(refused.error().message.find("hostd.unfold_delay_"), std::string::npos) << refused.error().message;
  }
}

TEST_F(HostilePeers, APoolCgroupOutsideTheCgroupTreeIsAConfigurationError) {
  for (const char* bad : {"/sys/fs/cgroup/machine.slice", "../../etc", "machine.slice/../.."}) {
    const auto config = parseHostdConfig(std::string("[inventory]\npool_cgroup = \"") + bad + "\"\n", "hostd.toml");
    ASSERT_FALSE(config) << bad;
    EXPECT_NE(config.error().message.find("inventory.pool_cgroup"), std::string::npos) << config.error().message;
  }
  const auto good = parseHostdConfig("[inventory]\npool_cgroup = \"qemu.slice\"\n", "hostd.toml");
  ASSERT_TRUE(good) << good.error().message;
  EXPECT_EQ(good->poolCgroup, "qemu.slice");
}

TEST_F(HostilePeers, SocketPathsTooLongForAUnixSocketAreRefusedInTheConfiguration) {
  const std::string longPath = "/run/" + std::string(110, 'x') + ".sock";
  const auto config = parseHostdConfig("[control]\nsocket = \"" + longPath + "\"\n", "hostd.toml");
  ASSERT_FALSE(config);
  EXPECT_NE(config.error().message.find("control.socket: the path is 120 bytes"), std::string::npos)
      << config.error().message;
  const auto vm = parseHostdConfig("[inventory]\nbackend = \"qmp\"\n[[vm]]\nname = \"a\"\nqmp_socket = \"" + longPath +
                                       "\"\nhint_socket = \"/run/a.sock\"\n",
                                   "hostd.toml");
  ASSERT_FALSE(vm);
  EXPECT_NE(vm.error().message.find("vm[0].qmp_socket"), std::string::npos) << vm.error().message;
}

TEST_F(HostilePeers, StatusGivesUpOnADaemonThatDoesNotAnswer) {
  // A control socket that accepts and then says nothing, as a wedged hostd's would.
  const int listener = listenUnixSocket(path("wedged.sock"), 4);
  ASSERT_GE(listener, 0);
  const auto start = Clock::now();
  const auto text = readControlSocket(path("wedged.sock"), kControlStatusRequest, std::chrono::milliseconds(300));
  EXPECT_FALSE(text);
  EXPECT_LT(msSince(start), 2000.0);
  if (!text) {
    EXPECT_NE(text.error().message.find("no answer within 300 ms"), std::string::npos) << text.error().message;
  }
  ::close(listener);
}
