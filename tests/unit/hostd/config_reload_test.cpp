// SPDX-License-Identifier: GPL-2.0-or-later
// planReload: every key changed in hostd.toml is either applied or named as
// waiting for a restart; nothing is dropped unsaid.

#include "vcpufold/hostd/config_reload.h"

#include <gtest/gtest.h>

#include <functional>

namespace vcpufold::hostd {
namespace {

using Keys = std::vector<std::string>;

HostdConfig parsed(const std::string& text) {
  auto config = parseHostdConfig(text, "hostd.toml");
  EXPECT_TRUE(config) << config.error().message;
  return config ? *config : HostdConfig{};
}

TEST(ConfigReload, AnUnchangedFileChangesNothing) {
  const HostdConfig running = parsed("[hostd]\ninterval_ms = 500\n");
  const auto plan = planHostdReload(running, running);
  EXPECT_TRUE(plan.appliedKeys.empty());
  EXPECT_TRUE(plan.restartKeys.empty());
  EXPECT_TRUE(plan.applied == running);
}

TEST(ConfigReload, RunTimeKeysAreAppliedAndNamed) {
  const HostdConfig running = parsed("[hostd]\ninterval_ms = 500\n");
  const HostdConfig next = parsed(
      "[hostd]\ninterval_ms = 700\nreserve_cpus = 0.5\nunfold_delay_ms = 3000\nunfold_margin_cpus = 0.5\n"
      "ttl_ticks = 4\nmissing_input_hold_ms = 2000\nlog_level = \"debug\"\n"
      "[[rule]]\nname = \"web-*\"\nweight = 300\n");
  const auto plan = planHostdReload(running, next);
  EXPECT_EQ(plan.appliedKeys, (Keys{"hostd.interval_ms", "hostd.reserve_cpus", "hostd.unfold_delay_ms",
                                    "hostd.unfold_margin_cpus", "hostd.ttl_ticks", "hostd.missing_input_hold_ms",
                                    "hostd.log_level", "[[rule]]"}));
  EXPECT_TRUE(plan.restartKeys.empty());
  EXPECT_TRUE(plan.applied == next) << "every change was one a reload applies";
}

TEST(ConfigReload, AVmTablesWeightOrModeEditWaitsForARestartAndIsNamed) {
  const std::string vm = "[inventory]\nbackend = \"qmp\"\n[[vm]]\nname = \"db\"\nqmp_socket = \"/run/db.qmp\"\n"
                         "hint_socket = \"/run/db.hint\"\n";
  const HostdConfig running = parsed(vm + "weight = 100\n");
  for (const std::string& edit : {std::string("weight = 300\n"), std::string("weight = 100\nmode = \"off\"\n")}) {
    const auto plan = planHostdReload(running, parsed(vm + edit));
    EXPECT_EQ(plan.restartKeys, Keys{"[[vm]]"}) << edit;
    EXPECT_TRUE(plan.appliedKeys.empty()) << edit;
    EXPECT_TRUE(plan.applied.qmpVms == running.qmpVms) << "the running VM table stays until a restart";
  }
}

TEST(ConfigReload, EveryConnectionKeyWaitsForARestartAndKeepsItsRunningValue) {
  const HostdConfig running = parsed("");
  const HostdConfig next = parsed(
      "[hostd]\ninterval_ms = 2000\n[inventory]\nbackend = \"qmp\"\nlibvirt_uri = \"test:///default\"\n"
      "qmp_directory = \"/run/qemu\"\nqmp_socket_owner = \"root\"\npool_cgroup = \"vms.slice\"\n"
      "[metrics]\naddress = \"[::1]:9478\"\n[control]\nsocket = \"/run/other.sock\"\n");
  const auto plan = planHostdReload(running, next);
  EXPECT_EQ(plan.appliedKeys, Keys{"hostd.interval_ms"});
  EXPECT_EQ(plan.restartKeys, (Keys{"inventory.backend", "inventory.libvirt_uri", "inventory.qmp_directory",
                                    "inventory.qmp_socket_owner", "inventory.pool_cgroup", "metrics.address",
                                    "control.socket"}));
  HostdConfig expected = running;
  expected.intervalMs = 2000;
  EXPECT_TRUE(plan.applied == expected);
}

}  // namespace
}  // namespace vcpufold::hostd
