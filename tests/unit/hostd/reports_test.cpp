// SPDX-License-Identifier: GPL-2.0-or-later
// What hostd shows of a decision: the status table (`status`, `--oneshot`)
// and the metrics page, the latter checked by Debian's promtool.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "vcpufold/hostd/metrics.h"
#include "vcpufold/hostd/status_table.h"
#include "vcpufold/hostd/tick.h"

namespace vcpufold::hostd {
namespace {

// Two 4-vCPU VMs on 2 pCPUs, both burning: "web" with a cooperative agent
// that applied CPUs 0-1, and one with a hostile name and refused metadata.
// webDeclines: web's agent said in hello that auto hints do not fold its guest kernel class.
TickReport contendedReport(bool webDeclines = false) {
  TickInputs inputs;
  inputs.poolCpus = 2;
  inputs.poolSource = "/sys/fs/cgroup/machine.slice/cpuset.cpus.effective";
  inputs.hostBusyCpus = 2.0;
  inputs.previousNonVmCpus = {{"0-1", 0.0}};
  for (const char* name : {"web", "odd \"vm\"\\\n"}) {
    VmRecord vm;
    vm.name = name;
    vm.vcpus = 4;
    vm.channelSocket = std::string("/run/") + (name[0] == 'w' ? "web" : "odd") + ".sock";
    VmSample before, after;
    after.monotonicNs = 1'000'000'000;
    before.vcpus.assign(4, VcpuCounters{});
    after.vcpus.assign(4, VcpuCounters{250'000'000, 750'000'000});
    inputs.previousSamples[name] = before;
    inputs.samples[name] = after;
    ChannelSnapshot channel;
    channel.state = ChannelState::Ready;
    channel.cooperative = name[0] == 'w';
    if (channel.cooperative) {
      protocol::Ack ack;
      ack.applied = protocol::CpuSet{0, 1};
      channel.lastAck = ack;
      protocol::Status status;
      status.control = protocol::Control::Host;
      status.stealBp = 1200;
      channel.lastStatus = status;
      channel.connects = 1;
      channel.hintsSent = 7;
      protocol::AgentInfo agent;
      agent.online = protocol::CpuSet::range(0, 3);
      agent.preferred = agent.online;
      agent.kernelClass = webDeclines ? "stock-6.6-and-later" : "stock-before-6.6";
      agent.foldsOnAutoHints = !webDeclines;
      channel.agentHello = protocol::Hello{protocol::Role::Agent, {1}, "vcpufold-agent", agent};
    } else {
      vm.policyError = "weight=\"0\" is out of range 1..10000";
    }
    inputs.vms.push_back(vm);
    inputs.channels[name] = channel;
  }
  HintStates state;
  return decideTick({}, inputs, state, 12);
}

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// promtool's verdict on a page: its exit status and what it printed.
std::pair<int, std::string> promtoolCheck(const std::string& page) {
  const std::string promtool = VCPUFOLD_PROMTOOL;
  if (promtool.empty())
    return {-1, "promtool not found: install Debian's prometheus package (scripts/install-deps.sh)"};
  const auto dir = std::filesystem::temp_directory_path() / ("vcpufold-promtool-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "page.txt") << page;
  const std::string command =
      promtool + " check metrics < " + (dir / "page.txt").string() + " > " + (dir / "out.txt").string() + " 2>&1";
  const int status = std::system(command.c_str());
  std::stringstream out;
  out << std::ifstream(dir / "out.txt").rdbuf();
  std::filesystem::remove_all(dir);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out.str()};
}

}  // namespace

TEST(StatusTable, OneRowPerVmUnderAPoolLineAndReasonsBelow) {
  const TickReport report = contendedReport();
  ASSERT_TRUE(report.contention);
  const auto lines = linesOf(renderStatusTable(report, true));
  ASSERT_EQ(lines.size(), 6u) << renderStatusTable(report, true);
  EXPECT_EQ(lines[0].rfind("pool 2 CPUs (/sys/fs/cgroup/machine.slice/cpuset.cpus.effective), reserve 0.00", 0), 0u)
      << lines[0];
  EXPECT_NE(lines[0].find(": contention"), std::string::npos);
  EXPECT_EQ(lines[1].rfind("VM ", 0), 0u);
  for (const char* column :
       {"VCPUS", "POOL", "POLICY", "AGENT", "DEMAND", "DELAY", "WEIGHT", "SHARE", "HINT", "APPLIED", "CONTROL"})
    EXPECT_NE(lines[1].find(column), std::string::npos) << column;
  // Columns line up: every value starts where its heading does.
  const auto hintColumn = lines[1].find("HINT");
  EXPECT_EQ(lines[2].rfind("web ", 0), 0u) << lines[2];
  EXPECT_NE(lines[2].find("ready"), std::string::npos);
  EXPECT_NE(lines[2].find("0-1"), std::string::npos) << "the applied CPUs";
  EXPECT_NE(lines[2].find("host"), std::string::npos) << "the agent's control";
  EXPECT_NE(lines[2].find("75%"), std::string::npos) << "delay: 750 ms waiting of 1000";
  ASSERT_TRUE(report.vms[0].allocation.hint);
  EXPECT_EQ(lines[2].substr(hintColumn, 1), std::to_string(*report.vms[0].allocation.hint));
  // A name with a newline stays on its row, escaped as in the logs.
  EXPECT_EQ(lines[3].rfind("odd \"vm\"\\\\\\x0A ", 0), 0u) << lines[3];
  EXPECT_NE(lines[3].find("auto!"), std::string::npos) << "refused metadata is marked: " << lines[3];
  EXPECT_NE(lines[3].find("no-acks"), std::string::npos);
  EXPECT_EQ(lines[4].rfind("web: contention: demand", 0), 0u) << lines[4];
  EXPECT_EQ(lines[5].rfind("odd \"vm\"\\\\\\x0A: ", 0), 0u) << lines[5];
  EXPECT_NE(lines[5].find("[policy metadata refused: weight=\"0\" is out of range 1..10000]"), std::string::npos)
      << lines[5];
  EXPECT_EQ(linesOf(renderStatusTable(report, false)).size(), 4u) << "no reasons asked for";
}

TEST(StatusTable, AReasonNamingAnotherVmStaysOnItsLine) {
  // A hold's reason names the VM without a sample: its name (a newline, a
  // terminal escape) must not start a line of its own or drive the terminal.
  TickReport report = contendedReport();
  report.vms[0].allocation.reason = "inputs missing (no vCPU sample of evil\n\x1b[2Jvm): holding 2 vCPUs";
  const std::string table = renderStatusTable(report, true);
  const auto lines = linesOf(table);
  ASSERT_EQ(lines.size(), 6u) << table;
  EXPECT_EQ(lines[4].rfind("web: inputs missing (no vCPU sample of evil\\x0A\\x1B[2Jvm): holding 2 vCPUs [policy: ", 0), 0u)
      << lines[4];
  EXPECT_EQ(table.find('\x1b'), std::string::npos);
}

TEST(MetricsPage, PromtoolFindsNothingWrongAndTheValuesAreTheDecisions) {
  const TickReport report = contendedReport();
  TickDurationHistogram histogram;
  histogram.observe(0.0004);
  histogram.observe(0.03);
  DaemonCounters counters;
  counters.inputsMissingTotal = 3;
  const std::string page = renderMetrics(report, histogram, counters);
  const auto [status, output] = promtoolCheck(page);
  EXPECT_EQ(status, 0) << output << "\n" << page;
  EXPECT_EQ(output, "") << "promtool's lint found something";

  const auto has = [&page](const std::string& line) { return page.find("\n" + line + "\n") != std::string::npos; };
  EXPECT_TRUE(has("vcpufold_host_vm_cpus 2"));
  EXPECT_TRUE(has("vcpufold_pool_cpus{pool=\"0-1\"} 2"));
  EXPECT_TRUE(has("vcpufold_pool_contention{pool=\"0-1\"} 1"));
  EXPECT_TRUE(has("vcpufold_pool_demand_cpus{pool=\"0-1\"} 8"));
  EXPECT_TRUE(has("vcpufold_vm_pool_info{vm=\"web\",pool=\"0-1\",dedicated=\"false\"} 1"));
  EXPECT_TRUE(has("vcpufold_contention 1"));
  EXPECT_TRUE(has("vcpufold_demand_cpus 8"));
  EXPECT_TRUE(has("vcpufold_ticks_total 12"));
  EXPECT_TRUE(has("vcpufold_tick_inputs_missing_total 3"));
  EXPECT_TRUE(has("vcpufold_tick_duration_seconds_bucket{le=\"0.001\"} 1"));
  EXPECT_TRUE(has("vcpufold_tick_duration_seconds_bucket{le=\"0.025\"} 1"));
  EXPECT_TRUE(has("vcpufold_tick_duration_seconds_bucket{le=\"0.05\"} 2"));
  EXPECT_TRUE(has("vcpufold_tick_duration_seconds_bucket{le=\"+Inf\"} 2"));
  EXPECT_TRUE(has("vcpufold_tick_duration_seconds_count 2"));
  EXPECT_TRUE(has("vcpufold_vm_hint_vcpus{vm=\"web\"} " + std::to_string(*report.vms[0].allocation.hint)));
  EXPECT_TRUE(has("vcpufold_vm_applied_cpus{vm=\"web\"} 2"));
  EXPECT_TRUE(has("vcpufold_vm_agent_steal_ratio{vm=\"web\"} 0.12"));
  EXPECT_TRUE(has("vcpufold_vm_delay_ratio{vm=\"web\"} 0.75"));
  EXPECT_TRUE(has("vcpufold_vm_hints_sent_total{vm=\"web\"} 7"));
  // A name with quotes, a backslash and a newline stays one label value.
  EXPECT_TRUE(has("vcpufold_vm_vcpus{vm=\"odd \\\"vm\\\"\\\\\\n\"} 4")) << page;
  EXPECT_TRUE(has("vcpufold_vm_agent_cooperative{vm=\"odd \\\"vm\\\"\\\\\\n\"} 0"));
}

TEST(StatusTable, AVmWhoseGuestKernelIsNotFoldedSaysSoInItsRowReasonAndMetrics) {
  const TickReport report = contendedReport(true);
  ASSERT_TRUE(report.vms[0].allocation.hint);
  EXPECT_EQ(*report.vms[0].allocation.hint, 4u) << "not folded: all its vCPUs";
  const auto lines = linesOf(renderStatusTable(report, true));
  ASSERT_GE(lines.size(), 5u);
  EXPECT_NE(lines[2].find(" not-folded:guest-kernel "), std::string::npos) << lines[2];
  EXPECT_EQ(lines[4].rfind("web: not folded: guest kernel (stock-6.6-and-later", 0), 0u) << lines[4];

  const std::string page = renderMetrics(report, TickDurationHistogram{}, DaemonCounters{});
  const auto [status, output] = promtoolCheck(page);
  EXPECT_EQ(status, 0) << output << "\n" << page;
  EXPECT_NE(page.find("\nvcpufold_vm_agent_folds_on_auto_hints{vm=\"web\",kernel_class=\"stock-6.6-and-later\"} 0\n"),
            std::string::npos)
      << page;
  // The other VM said no hello: no sample, rather than a made-up class.
  EXPECT_EQ(page.find("vcpufold_vm_agent_folds_on_auto_hints{vm=\"odd"), std::string::npos) << page;
  // And an agent that folds its class says 1.
  const std::string folding = renderMetrics(contendedReport(false), TickDurationHistogram{}, DaemonCounters{});
  EXPECT_NE(folding.find("\nvcpufold_vm_agent_folds_on_auto_hints{vm=\"web\",kernel_class=\"stock-before-6.6\"} 1\n"),
            std::string::npos)
      << folding;
}

TEST(MetricsPage, AnAgentsStateTellsNoPortNoAgentBrokenAndCooperativeApart) {
  VmReport vm;
  EXPECT_STREQ(agentStateName(vm), "no_channel");
  vm.record.channelSocket = "/run/vm.sock";
  EXPECT_STREQ(agentStateName(vm), "no_agent") << "a port nobody answers on: never installed, or not started";
  vm.channel.state = ChannelState::WaitingForHello;
  EXPECT_STREQ(agentStateName(vm), "no_agent");
  vm.channel.state = ChannelState::Ready;
  vm.channel.agentHello = protocol::Hello{};
  EXPECT_STREQ(agentStateName(vm), "not_acknowledging");
  vm.channel.cooperative = true;
  EXPECT_STREQ(agentStateName(vm), "cooperative");
  vm.channel.cooperative = false;
  vm.channel.state = ChannelState::Penalised;
  EXPECT_STREQ(agentStateName(vm), "penalised");

  TickReport report;
  report.vms.push_back(vm);
  DaemonFacts facts;
  facts.version = "9.8.7";
  facts.startTimeSeconds = 1'800'000'000;
  facts.tickIntervalSeconds = 0.5;
  facts.lastReloadSuccessful = false;
  facts.lastReloadSuccessTimeSeconds = 1'800'000'100;
  const std::string page = renderMetrics(report, TickDurationHistogram{}, DaemonCounters{}, facts);
  const auto [status, output] = promtoolCheck(page);
  EXPECT_EQ(status, 0) << output << "\n" << page;
  for (const char* line :
       {"vcpufold_build_info{version=\"9.8.7\"} 1\n", "process_start_time_seconds 1800000000\n",
        "vcpufold_tick_interval_seconds 0.5\n", "vcpufold_config_last_reload_successful 0\n",
        "vcpufold_config_last_reload_success_timestamp_seconds 1800000100\n",
        "vcpufold_vm_agent_state{vm=\"\",state=\"penalised\"} 1\n",
        "vcpufold_vm_agent_state{vm=\"\",state=\"cooperative\"} 0\n",
        "vcpufold_vm_agent_state{vm=\"\",state=\"no_channel\"} 0\n"})
    EXPECT_NE(page.find(line), std::string::npos) << line << page;
}

TEST(MetricsPage, PromtoolCatchesABrokenPage) {
  // The check above is only worth something if promtool refuses a bad page.
  const auto [status, output] = promtoolCheck("# TYPE x gauge\nx{vm=\"a} 1\n");
  EXPECT_NE(status, 0) << output;
}

}  // namespace vcpufold::hostd
