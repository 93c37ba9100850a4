// SPDX-License-Identifier: GPL-2.0-or-later
// parseHostdConfig: /etc/vcpufold/hostd.toml as an operator writes it.

#include "vcpufold/hostd/hostd_config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace vcpufold::hostd {
namespace {

std::string packagedFile() {
  std::ifstream in(std::string(VCPUFOLD_SOURCE_DIR) + "/packaging/hostd/hostd.toml");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> problemLines(const std::string& text) {
  const auto config = parseHostdConfig(text, "hostd.toml");
  EXPECT_FALSE(config) << text;
  std::vector<std::string> lines;
  if (config) return lines;
  std::istringstream in(config.error().message);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

TEST(HostdConfig, ThePackagedFileIsTheDefaults) {
  const std::string text = packagedFile();
  ASSERT_FALSE(text.empty());
  const auto packaged = parseHostdConfig(text, "hostd.toml");
  ASSERT_TRUE(packaged) << packaged.error().message;
  const HostdConfig defaults;
  EXPECT_EQ(packaged->intervalMs, defaults.intervalMs);
  EXPECT_EQ(packaged->reserveCpus, defaults.reserveCpus);
  EXPECT_EQ(packaged->unfoldDelayMs, defaults.unfoldDelayMs);
  EXPECT_EQ(packaged->unfoldMarginCpus, defaults.unfoldMarginCpus);
  EXPECT_EQ(packaged->ttlTicks, defaults.ttlTicks);
  EXPECT_EQ(packaged->missingInputHoldMs, defaults.missingInputHoldMs);
  EXPECT_EQ(packaged->inventory, InventoryKind::Libvirt);
  EXPECT_EQ(packaged->libvirtUri, defaults.libvirtUri);
  EXPECT_EQ(packaged->metricsAddress, defaults.metricsAddress);
  EXPECT_EQ(packaged->controlSocket, defaults.controlSocket);
}

TEST(HostdConfig, EveryKeyIsRead) {
  const auto config = parseHostdConfig(R"([hostd]
interval_ms = 500
reserve_cpus = 1.5
unfold_delay_ms = 2000
unfold_margin_cpus = 0.5
ttl_ticks = 4
missing_input_hold_ms = 3000
log_level = "debug"
[inventory]
backend = "qmp"
qmp_directory = "/run/qemu"
pool_cgroup = "qemu.slice"
[metrics]
address = ""
[control]
socket = "/run/other.sock"
[[vm]]
name = "web"
qmp_socket = "/run/web.qmp"
hint_socket = "/run/web.hint.sock"
mode = "auto"
min_vcpus = 2
max_vcpus = 6
weight = 300
[[vm]]
name = "db"
qmp_socket = "/run/db.qmp"
hint_socket = "/run/db.hint.sock"
mode = "fixed"
vcpus = 3
)",
                                       "hostd.toml");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->intervalMs, 500u);
  EXPECT_EQ(config->reserveCpus, 1.5);
  EXPECT_EQ(config->unfoldDelayMs, 2000u);
  EXPECT_EQ(config->unfoldMarginCpus, 0.5);
  EXPECT_EQ(config->ttlTicks, 4u);
  EXPECT_EQ(config->missingInputHoldMs, 3000u);
  EXPECT_EQ(config->logLevel, "debug");
  EXPECT_EQ(config->inventory, InventoryKind::Qmp);
  EXPECT_EQ(config->qmpDirectory, "/run/qemu");
  EXPECT_EQ(config->poolCgroup, "qemu.slice");
  EXPECT_EQ(config->metricsAddress, "");
  EXPECT_EQ(config->controlSocket, "/run/other.sock");
  ASSERT_EQ(config->qmpVms.size(), 2u);
  const FoldPolicy web = config->qmpVms[0].policy;
  EXPECT_EQ(web.mode, FoldMode::Auto);
  EXPECT_EQ(web.minVcpus, 2u);
  EXPECT_EQ(web.maxVcpus, 6u);
  EXPECT_EQ(web.weight, 300u);
  EXPECT_EQ(config->qmpVms[1].policy.mode, FoldMode::Fixed);
  EXPECT_EQ(config->qmpVms[1].policy.fixedVcpus, 3u);
  EXPECT_EQ(config->qmpVms[1].hintSocket, "/run/db.hint.sock");
}

TEST(HostdConfig, EveryProblemIsReportedAtOnceInTheFilesSpelling) {
  const auto lines = problemLines(R"([hostd]
interval_ms = "fast"
intervall_ms = 100
reserve_cpus = -1
[inventory]
backend = "xen"
[[vm]]
name = "web"
qmp_socket = "/run/web.qmp"
min_vcpus = 5
max_vcpus = 2
colour = "red"
[[vm]]
qmp_socket = "/run/db.qmp"
hint_socket = "/run/db.hint.sock"
mode = "fixed"
)");
  const auto has = [&lines](const std::string& text) {
    for (const auto& line : lines)
      if (line.find(text) != std::string::npos) return true;
    return false;
  };
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "hostd.toml:") << "the file is named first";
  EXPECT_TRUE(has("hostd.interval_ms: expected an integer 0..4294967295"));
  EXPECT_TRUE(has("hostd.intervall_ms: unknown key"));
  EXPECT_TRUE(has("hostd.reserve_cpus: must be 0..4096"));
  EXPECT_TRUE(has("inventory.backend: \"xen\" is not libvirt or qmp"));
  EXPECT_TRUE(has("vm[0].colour: unknown key"));
  EXPECT_TRUE(has("vm[0].hint_socket: required"));
  EXPECT_TRUE(has("vm[0].policy: min_vcpus (5) is above max_vcpus (2)"));
  EXPECT_TRUE(has("vm[1].name: required"));
  EXPECT_TRUE(has("vm[1].policy: mode \"fixed\" needs vcpus = N"));
  for (const auto& line : lines) EXPECT_EQ(line.find("min-vcpus"), std::string::npos) << "XML spelling in: " << line;
}

TEST(HostdConfig, TheSameNameTwiceAndVmsThatAreNotTablesAreRefused) {
  const std::string vm = "[[vm]]\nname = \"a\"\nqmp_socket = \"/q\"\nhint_socket = \"/h\"\n";
  const auto twice = problemLines("[inventory]\nbackend = \"qmp\"\n" + vm + vm);
  ASSERT_FALSE(twice.empty());
  EXPECT_NE(twice.back().find("the name \"a\" appears twice"), std::string::npos) << twice.back();
  const auto notTables = problemLines("vm = [1, 2]\n");
  ASSERT_EQ(notTables.size(), 3u);
  EXPECT_EQ(notTables[1], "vm[0]: expected a table");
  const auto scalar = problemLines("vm = 3\n");
  ASSERT_EQ(scalar.size(), 2u);
  EXPECT_EQ(scalar[1], "vm: expected [[vm]] tables");
}

TEST(HostdConfig, NotTomlNamesTheLineAndColumn) {
  const auto config = parseHostdConfig("[hostd]\ninterval_ms = = 3\n", "/etc/vcpufold/hostd.toml");
  ASSERT_FALSE(config);
  EXPECT_EQ(config.error().message.rfind("/etc/vcpufold/hostd.toml:2:", 0), 0u) << config.error().message;
}

TEST(HostdConfig, AMetricsAddressThatCannotBeBoundIsAProblemOfTheFile) {
  const auto lines = problemLines("[metrics]\naddress = \"localhost:9477\"\n");
  bool named = false;
  for (const auto& line : lines) named = named || line.find("metrics.address \"localhost:9477\"") != std::string::npos;
  EXPECT_TRUE(named) << ::testing::PrintToString(lines);
  EXPECT_TRUE(parseHostdConfig("[metrics]\naddress = \"[::]:9477\"\n", "hostd.toml"));
  EXPECT_TRUE(parseHostdConfig("[metrics]\naddress = \"\"\n", "hostd.toml")) << "empty: metrics off";
}

}  // namespace vcpufold::hostd
