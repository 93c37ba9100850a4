// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/metrics_textfile.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

using namespace vcpufold::agent;
using vcpufold::protocol::Actuator;
using vcpufold::protocol::Control;
using vcpufold::protocol::CpuSet;

namespace {

AgentMetricsSnapshot foldedByTheHost() {
  AgentMetricsSnapshot snapshot;
  snapshot.version = "1.2.3";
  snapshot.actuator = Actuator::Cpuset;
  snapshot.online = CpuSet::range(0, 3);
  snapshot.preferred = CpuSet{0, 1};
  snapshot.control = Control::Host;
  snapshot.hostConnected = true;
  snapshot.lastHintSeq = 42;
  snapshot.lastHintAgeSeconds = 0.25;
  snapshot.stealBp = 1250;
  snapshot.demandTasks = 1.5;
  return snapshot;
}

bool has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

}  // namespace

TEST(MetricsTextfile, SaysWhatIsPreferredWhoDecidedAndTheLastHint) {
  const std::string text = "\n" + formatMetricsTextfile(foldedByTheHost());
  EXPECT_TRUE(has(text, "vcpufold_agent_info{version=\"1.2.3\",actuator=\"cpuset\"} 1")) << text;
  EXPECT_TRUE(has(text, "vcpufold_agent_running 1"));
  EXPECT_TRUE(has(text, "vcpufold_agent_online_cpus 4"));
  EXPECT_TRUE(has(text, "vcpufold_agent_preferred_cpus 2"));
  EXPECT_TRUE(has(text, "vcpufold_agent_cpu_preferred{cpu=\"1\"} 1"));
  EXPECT_TRUE(has(text, "vcpufold_agent_cpu_preferred{cpu=\"2\"} 0"));
  EXPECT_TRUE(has(text, "vcpufold_agent_control{control=\"host\"} 1"));
  EXPECT_TRUE(has(text, "vcpufold_agent_control{control=\"fallback\"} 0"));
  EXPECT_TRUE(has(text, "vcpufold_agent_control{control=\"none\"} 0"));
  EXPECT_TRUE(has(text, "vcpufold_agent_host_connected 1"));
  EXPECT_TRUE(has(text, "vcpufold_agent_last_hint_seq 42"));
  EXPECT_TRUE(has(text, "vcpufold_agent_last_hint_age_seconds 0.25"));
  EXPECT_TRUE(has(text, "vcpufold_agent_steal_ratio 0.125"));
  EXPECT_TRUE(has(text, "vcpufold_agent_demand_tasks 1.5"));
  EXPECT_TRUE(has(text, "# TYPE vcpufold_agent_cpu_preferred gauge"));
}

TEST(MetricsTextfile, SaysWhetherAutoHintsFoldThisGuestAndItsKernelClass) {
  auto snapshot = foldedByTheHost();
  snapshot.kernelClass = "stock-before-6.6";
  EXPECT_TRUE(has("\n" + formatMetricsTextfile(snapshot),
                  "vcpufold_agent_folds_on_auto_hints{kernel_class=\"stock-before-6.6\"} 1"));
  snapshot.kernelClass = "stock-6.6-and-later";
  snapshot.foldsOnAutoHints = false;
  const std::string text = "\n" + formatMetricsTextfile(snapshot);
  EXPECT_TRUE(has(text, "vcpufold_agent_folds_on_auto_hints{kernel_class=\"stock-6.6-and-later\"} 0")) << text;
}

TEST(MetricsTextfile, NoHintYetMeansNoHintSeries) {
  auto snapshot = foldedByTheHost();
  snapshot.lastHintSeq.reset();
  snapshot.lastHintAgeSeconds.reset();
  snapshot.control = Control::Fallback;
  const std::string text = formatMetricsTextfile(snapshot);
  EXPECT_EQ(text.find("vcpufold_agent_last_hint"), std::string::npos) << text;
  EXPECT_NE(text.find("vcpufold_agent_control{control=\"fallback\"} 1"), std::string::npos);
}

TEST(MetricsTextfile, EveryFamilyHasItsHelpAndTypeOnceAndEverySampleAFamily) {
  const std::string text = formatMetricsTextfile(foldedByTheHost());
  std::set<std::string> typed;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# TYPE ", 0) == 0) {
      EXPECT_TRUE(typed.insert(line.substr(7, line.find(' ', 7) - 7)).second) << line;
    } else if (line[0] != '#') {
      const std::string name = line.substr(0, line.find_first_of("{ "));
      EXPECT_TRUE(typed.count(name)) << line;
    }
  }
  EXPECT_EQ(typed.size(), 12u);
}

TEST(MetricsTextfile, ALabelValueCannotBreakTheFormat) {
  auto snapshot = foldedByTheHost();
  snapshot.version = "1\"\n2\\";
  const std::string text = formatMetricsTextfile(snapshot);
  EXPECT_NE(text.find("version=\"1\\\"\\n2\\\\\""), std::string::npos) << text;
}
