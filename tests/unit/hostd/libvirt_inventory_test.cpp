// SPDX-License-Identifier: GPL-2.0-or-later
// LibvirtInventory against libvirt's own test driver: the real libvirt API,
// a node file holding domains with channels and policy metadata.

#include "vcpufold/hostd/libvirt_inventory.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "fixture_tree.h"

using namespace vcpufold::hostd;
using vcpufold::testing::fixturesDirectory;

namespace {

std::string testUri() { return "test://" + (fixturesDirectory() / "libvirt-test-driver/node.xml").string(); }

std::map<std::string, VmRecord> byName(const std::vector<VmRecord>& domains) {
  std::map<std::string, VmRecord> map;
  for (const auto& domain : domains) map[domain.name] = domain;
  return map;
}

std::string readFixture(const std::string& path) {
  std::ifstream in(fixturesDirectory() / path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Refreshes until the condition holds (events arrive on libvirt's event thread).
std::map<std::string, VmRecord> refreshUntil(LibvirtInventory& inventory,
                                             const std::function<bool(const std::map<std::string, VmRecord>&)>& done) {
  std::map<std::string, VmRecord> domains;
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto refreshed = inventory.refresh();
    EXPECT_TRUE(refreshed) << refreshed.error().message;
    if (!refreshed) break;
    domains = byName(*refreshed);
    if (done(domains)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return domains;
}

}  // namespace

TEST(DomainXml, ChannelFromCapturedLiveXml) {
  auto explicitPath = findHintChannel(readFixture("libvirt-tcg-host/fixture-a.live.xml"));
  ASSERT_TRUE(explicitPath) << explicitPath.error().message;
  ASSERT_TRUE(*explicitPath);
  EXPECT_EQ((*explicitPath)->socketPath, "/var/tmp/vcpufold-lab/libvirt/fixture-a.hint.sock");
  EXPECT_EQ((*explicitPath)->state, "disconnected");
  auto generated = findHintChannel(readFixture("libvirt-tcg-host/fixture-b.live.xml"));
  ASSERT_TRUE(generated && *generated);
  EXPECT_EQ((*generated)->socketPath, "/var/lib/libvirt/qemu/channel/target/domain-4-fixture-b/org.vcpufold.hint.0");
  EXPECT_FALSE(*findHintChannel("<domain><devices/></domain>"));
  EXPECT_FALSE(findHintChannel("<domain>"));
  EXPECT_FALSE(findHintChannel(
      "<domain><devices><channel type='unix'><source mode='bind'/><target type='virtio' name='org.vcpufold.hint.0'/>"
      "</channel></devices></domain>"))
      << "no path: an inactive definition";
  // QEMU as the client of someone else's socket: hostd would connect to
  // whatever serves that path.
  const auto connect = findHintChannel(
      "<domain><devices><channel type='unix'><source mode='connect' path='/run/systemd/private'/>"
      "<target type='virtio' name='org.vcpufold.hint.0'/></channel></devices></domain>");
  ASSERT_FALSE(connect);
  EXPECT_NE(connect.error().message.find("mode='connect'"), std::string::npos) << connect.error().message;
  EXPECT_FALSE(findHintChannel("<domain><devices><channel type='unix'><source path='/run/x.sock'/>"
                               "<target type='virtio' name='org.vcpufold.hint.0'/></channel></devices></domain>"))
      << "no mode: not known to be QEMU's own socket";
}

TEST(LibvirtInventory, DomainsChannelsPoliciesFromTheTestDriver) {
  LibvirtInventory::startEventLoop();
  LibvirtInventory inventory(testUri());
  auto refreshed = inventory.refresh();
  ASSERT_TRUE(refreshed) << refreshed.error().message;
  auto domains = byName(*refreshed);
  ASSERT_EQ(domains.size(), 3u);
  const auto& good = domains["explicit-path"];
  EXPECT_EQ(good.vcpus, 4u);
  ASSERT_TRUE(good.channelSocket);
  EXPECT_EQ(*good.channelSocket, "/run/vcpufold-test/explicit-path.sock") << "not the guest agent's channel";
  EXPECT_EQ(good.policy.mode, FoldMode::Auto);
  EXPECT_EQ(good.policy.minVcpus, 2u);
  EXPECT_EQ(good.policy.weight, 300u);
  EXPECT_FALSE(good.policyError);
  EXPECT_FALSE(good.uuid.empty());

  EXPECT_FALSE(domains["no-channel"].channelSocket);
  EXPECT_EQ(domains["no-channel"].policy, FoldPolicy{}) << "no metadata: the default policy";

  const auto& bad = domains["bad-policy"];
  ASSERT_TRUE(bad.policyError);
  EXPECT_NE(bad.policyError->find("mode=\"sometimes\""), std::string::npos) << *bad.policyError;
  EXPECT_EQ(bad.policy, FoldPolicy{}) << "nothing valid yet: the default";
}

TEST(LibvirtInventory, MetadataChangesArriveAndMalformedOnesKeepTheLastValid) {
  LibvirtInventory::startEventLoop();
  LibvirtInventory inventory(testUri());
  ASSERT_TRUE(inventory.refresh());
  ASSERT_TRUE(inventory.watchingEvents()) << "metadata changes must arrive as events, not by polling";
  ASSERT_TRUE(inventory.setPolicyXml("explicit-path", R"(<policy mode="fixed" vcpus="3"/>)"));
  auto domains =
      refreshUntil(inventory, [](const auto& d) { return d.at("explicit-path").policy.mode == FoldMode::Fixed; });
  EXPECT_EQ(domains["explicit-path"].policy.mode, FoldMode::Fixed);
  EXPECT_EQ(domains["explicit-path"].policy.fixedVcpus, 3u);

  ASSERT_TRUE(inventory.setPolicyXml("explicit-path", R"(<policy mode="fixed"/>)"));
  domains = refreshUntil(inventory, [](const auto& d) { return d.at("explicit-path").policyError.has_value(); });
  ASSERT_TRUE(domains["explicit-path"].policyError);
  EXPECT_NE(domains["explicit-path"].policyError->find("needs vcpus"), std::string::npos);
  EXPECT_EQ(domains["explicit-path"].policy.fixedVcpus, 3u) << "the last valid policy stays";

  ASSERT_TRUE(inventory.setPolicyXml("bad-policy", R"(<policy mode="off"/>)"));
  domains = refreshUntil(inventory, [](const auto& d) { return !d.at("bad-policy").policyError; });
  EXPECT_EQ(domains["bad-policy"].policy.mode, FoldMode::Off);
}

TEST(LibvirtInventory, UnreachableLibvirtIsAnErrorNotACrash) {
  LibvirtInventory inventory("qemu+unix:///system?socket=/nonexistent/libvirt-sock");
  auto refreshed = inventory.refresh();
  ASSERT_FALSE(refreshed);
  EXPECT_NE(refreshed.error().message.find("cannot connect"), std::string::npos) << refreshed.error().message;
  auto again = inventory.refresh();
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message.find("retrying"), std::string::npos) << "backs off instead of hammering";
}

TEST(LibvirtInventory, WhereVcpusMayRunFromVcpupinAndVcpuCpuset) {
  LibvirtInventory::startEventLoop();
  // No QEMU threads under this root: the placement is libvirt's record.
  vcpufold::testing::FixtureTree root("");
  LibvirtInventory inventory("test://" + (fixturesDirectory() / "libvirt-test-driver/pinned-node.xml").string(),
                             root.fs());
  auto refreshed = inventory.refresh();
  ASSERT_TRUE(refreshed) << refreshed.error().message;
  auto domains = byName(*refreshed);
  ASSERT_EQ(domains.size(), 5u);
  using vcpufold::protocol::CpuSet;
  EXPECT_EQ(domains["shared-1"].placement.cpus, CpuSet::range(1, 4)) << "<vcpu cpuset='1-4'>";
  EXPECT_FALSE(domains["shared-1"].placement.pinnedOneToOne);
  EXPECT_EQ(domains["shared-1"].placement.source, "libvirt vcpupin");
  EXPECT_EQ(domains["dedicated-a"].placement.cpus, CpuSet{5}) << "the emulator pin is not where the vCPU runs";
  EXPECT_TRUE(domains["dedicated-a"].placement.pinnedOneToOne);
  EXPECT_EQ(domains["dedicated-b"].placement.cpus, CpuSet{6});
  EXPECT_EQ(domains["pinned-shared"].placement.cpus, CpuSet{4});
  EXPECT_FALSE(domains["pinned-shared"].placement.pinnedOneToOne) << "two vCPUs on one pCPU";
}

// vCPU counters come from each VM's QEMU vCPU threads in /proc (its pid from
// libvirt's pid file), not from libvirt's vCPU statistics, which wait for
// QEMU's monitor. The QEMU here is the captured pinned-threads process
// (2 vCPU threads) standing in for domain explicit-path; the test driver's
// other domains have no QEMU under this root, so no sample, said once each.
TEST(LibvirtInventory, VcpuCountersFromEachQemusVcpuThreadsInProc) {
  LibvirtInventory::startEventLoop();
  vcpufold::testing::FixtureTree tree("host-qemu-pinned-threads");
  tree.write("/run/libvirt/qemu/explicit-path.pid", "30855\n");
  LibvirtInventory inventory(testUri(), tree.fs());
  ASSERT_TRUE(inventory.refresh());
  inventory.takeNotes();
  const auto samples = inventory.sample();
  ASSERT_TRUE(samples) << samples.error().message;
  ASSERT_EQ(samples->size(), 1u) << "only the domain whose QEMU this root shows";
  const auto& sample = samples->at("explicit-path");
  ASSERT_EQ(sample.vcpus.size(), 2u);
  for (const auto& [vcpu, tid] : {std::pair{0u, 30858}, std::pair{1u, 30859}}) {
    const auto expected = parseSchedstat(tree.read("/proc/30855/task/" + std::to_string(tid) + "/schedstat"));
    ASSERT_TRUE(expected);
    EXPECT_EQ(sample.vcpus[vcpu].runNs, expected->runNs) << "vCPU " << vcpu;
    EXPECT_EQ(sample.vcpus[vcpu].delayNs, expected->delayNs) << "vCPU " << vcpu;
  }
  const auto notes = inventory.takeNotes();
  for (const char* name : {"no-channel", "bad-policy"}) {
    const std::string prefix = std::string("libvirt: ") + name + ": no vCPU sample: ";
    EXPECT_EQ(
        std::count_if(notes.begin(), notes.end(), [&](const std::string& note) { return note.rfind(prefix, 0) == 0; }),
        1)
        << name << " without a sample is said, once";
  }
  ASSERT_TRUE(inventory.sample());
  EXPECT_TRUE(inventory.takeNotes().empty()) << "the same problem is not said again";
  // The QEMU goes: its sample goes, and that is said.
  tree.remove("/proc/30855/task/30859/schedstat");
  const auto after = inventory.sample();
  ASSERT_TRUE(after);
  EXPECT_FALSE(after->count("explicit-path"));
  const auto gone = inventory.takeNotes();
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_NE(gone[0].find("explicit-path: no vCPU sample: "), std::string::npos) << gone[0];
  EXPECT_NE(gone[0].find("30859"), std::string::npos) << gone[0];
}
