// SPDX-License-Identifier: GPL-2.0-or-later
// Prometheus as an operator deploys it, against a running hostd with emulated
// VMs and real agents: the live page passes Debian's promtool check metrics;
// every metric the shipped dashboard and rules name is on it; Debian's
// Prometheus server scrapes it, loads the shipped rules, evaluates every one
// of them without error and answers PromQL about a VM's hint.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "child_process.h"
#include "emulated_guest.h"
#include "fixture_tree.h"
#include "unix_socket.h"

using vcpufold::testing::ChildProcess;
using vcpufold::testing::EmulatedGuest;
using vcpufold::testing::FixtureTree;
using vcpufold::testing::freeLoopbackPort;
using vcpufold::testing::httpGet;
using vcpufold::testing::httpGetBody;
using vcpufold::testing::runShell;
using vcpufold::testing::startEmulatedGuest;
using vcpufold::testing::waitUntil;

namespace {

const std::string kRules = VCPUFOLD_SOURCE_DIR "/packaging/hostd/prometheus/vcpufold-rules.yml";
const std::string kDashboard = VCPUFOLD_SOURCE_DIR "/packaging/hostd/grafana/vcpufold-dashboard.json";

std::string readText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The metric names of a text-format page.
std::set<std::string> namesOnPage(const std::string& page) {
  std::set<std::string> names;
  std::istringstream lines(page);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line[0] != '#') names.insert(line.substr(0, line.find_first_of("{ ")));
  return names;
}

std::set<std::string> tokens(const std::string& text, const std::regex& pattern) {
  std::set<std::string> found;
  for (std::sregex_iterator it(text.begin(), text.end(), pattern), end; it != end; ++it) found.insert((*it)[0]);
  return found;
}

// Every PromQL string of a dashboard: panel targets and template queries.
void collectQueries(const nlohmann::json& node, std::string& all) {
  if (node.is_object()) {
    for (const auto& [key, value] : node.items()) {
      if ((key == "expr" || key == "query" || key == "definition") && value.is_string())
        all += value.get<std::string>() + "\n";
      else
        collectQueries(value, all);
    }
  } else if (node.is_array()) {
    for (const auto& item : node) collectQueries(item, all);
  }
}

std::string urlEncoded(const std::string& text) {
  std::string out;
  const char* hex = "0123456789ABCDEF";
  for (const char character : text) {
    const auto c = static_cast<unsigned char>(character);
    if (std::isalnum(c) || c == '_' || c == '-' || c == '.' || c == ':') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// The value of a one-series PromQL answer, or "" (no answer, no series yet).
std::string instantValue(int port, const std::string& query) {
  const std::string body = httpGetBody(port, "/api/v1/query?query=" + urlEncoded(query));
  const auto answer = nlohmann::json::parse(body, nullptr, false);
  if (answer.is_discarded() || answer.value("status", "") != "success") return "";
  const auto& result = answer["data"]["result"];
  if (!result.is_array() || result.size() != 1) return "";
  return result[0]["value"][1].get<std::string>();
}

}  // namespace

TEST(HostdPrometheus, TheShippedRulesAndDashboardWorkOnTheLivePage) {
  for (const char* tool : {"/usr/bin/prometheus", "/usr/bin/promtool"})
    if (::access(tool, X_OK) != 0) GTEST_SKIP() << tool << " missing (apt-get install prometheus)";
  FixtureTree work("");
  const std::string dir = work.root().string();
  std::vector<EmulatedGuest> guests;
  for (const char* vm : {"vm1", "vm2"}) guests.push_back(startEmulatedGuest(dir, vm, "4"));
  ASSERT_TRUE(waitUntil([&] { return work.fs().exists("/vm1.qmp") && work.fs().exists("/vm2.hint.sock"); }, 5000));
  const int port = freeLoopbackPort();
  work.write("/hostd.toml", "[hostd]\ninterval_ms = 300\n[inventory]\nbackend = \"qmp\"\nqmp_directory = \"" + dir +
                                "\"\n[metrics]\naddress = \"127.0.0.1:" + std::to_string(port) +
                                "\"\n[control]\nsocket = \"" + dir + "/hostd.sock\"\n");
  ChildProcess hostd(VCPUFOLD_HOSTD_BINARY, {"--config", dir + "/hostd.toml"}, dir + "/hostd.log");

  // Folded and acknowledged: every per-VM family has its samples.
  std::string page;
  ASSERT_TRUE(waitUntil(
      [&] {
        page = httpGet(port, "/metrics");
        return page.find("vcpufold_vm_applied_cpus{vm=\"vm1\"} 1") != std::string::npos &&
               page.find("vcpufold_vm_applied_cpus{vm=\"vm2\"} 1") != std::string::npos;
      },
      15'000))
      << page << runShell("tail -20 " + dir + "/hostd.log");
  page = page.substr(page.find("\r\n\r\n") + 4);
  work.write("/page.txt", page);
  const std::string lint = runShell("promtool check metrics < " + dir + "/page.txt 2>&1; echo \"exit $?\"");
  EXPECT_EQ(lint, "exit 0\n") << "promtool check metrics on the live page";
  // status --json: the same decision for scripts; an unknown request is answered, not hung on.
  const std::string statusCommand =
      std::string(VCPUFOLD_HOSTD_BINARY) + " --config " + dir + "/hostd.toml status --json";
  const auto status = nlohmann::json::parse(runShell(statusCommand), nullptr, false);
  ASSERT_FALSE(status.is_discarded()) << runShell(statusCommand);
  ASSERT_EQ(status["vms"].size(), 2u) << status.dump();
  for (const auto& vm : status["vms"]) {
    EXPECT_EQ(vm["hint_vcpus"], 1) << vm.dump();
    EXPECT_EQ(vm["vcpus"], 4) << vm.dump();
    EXPECT_EQ(vm["agent_state"], "cooperative") << vm.dump();
    EXPECT_TRUE(vm["applied_cpus"].is_string()) << vm.dump();
    EXPECT_FALSE(vm["reason"].get<std::string>().empty()) << vm.dump();
  }
  EXPECT_EQ(status["contention"], true) << status.dump();
  EXPECT_EQ(runShell("printf 'bogus\\n' | socat -t5 - UNIX-CONNECT:" + dir + "/hostd.sock"),
            "error: unknown request (this vcpufold-hostd answers \"status\" and \"status json\")\n");

  // What the daemon is, and how each VM's agent stands (one state at 1).
  EXPECT_NE(page.find("vcpufold_build_info{version=\"" VCPUFOLD_VERSION "\"} 1\n"), std::string::npos) << page;
  EXPECT_NE(page.find("vcpufold_tick_interval_seconds 0.3\n"), std::string::npos) << page;
  EXPECT_NE(page.find("vcpufold_config_last_reload_successful 1\n"), std::string::npos) << page;
  for (const char* vm : {"vm1", "vm2"}) {
    const std::string prefix = std::string("vcpufold_vm_agent_state{vm=\"") + vm + "\",state=\"";
    EXPECT_NE(page.find(prefix + "cooperative\"} 1\n"), std::string::npos) << page;
    EXPECT_NE(page.find(prefix + "no_agent\"} 0\n"), std::string::npos) << page;
  }

  const std::set<std::string> onPage = namesOnPage(page);
  const std::regex metricName("vcpufold_[a-z0-9_]+");
  const std::regex recordedName("vcpufold:[a-z0-9_:]+");
  const std::string rules = readText(kRules);
  std::set<std::string> recorded;
  for (const auto& line : tokens(rules, std::regex("record: vcpufold:[a-z0-9_:]+")))
    recorded.insert(line.substr(std::string("record: ").size()));
  ASSERT_EQ(recorded.size(), 4u) << "the recording rules of " << kRules;
  for (const auto& name : tokens(rules, metricName)) EXPECT_TRUE(onPage.count(name)) << kRules << " names " << name;

  const auto dashboard = nlohmann::json::parse(readText(kDashboard), nullptr, false);
  ASSERT_FALSE(dashboard.is_discarded()) << kDashboard << " is not JSON";
  std::string queries;
  collectQueries(dashboard, queries);
  ASSERT_GT(tokens(queries, metricName).size(), 15u) << queries;
  for (const auto& name : tokens(queries, metricName))
    EXPECT_TRUE(onPage.count(name)) << "the dashboard queries " << name << ", not on the live page";
  for (const auto& name : tokens(queries, recordedName))
    EXPECT_TRUE(recorded.count(name)) << "the dashboard queries " << name << ", which no rule records";
  for (const auto& panel : dashboard["panels"]) {
    if (panel["type"] == "timeseries") {
      EXPECT_FALSE(panel["targets"].empty()) << panel["title"];
    }
  }

  // A real Prometheus scrapes hostd every second with the shipped rules.
  const int prometheusPort = freeLoopbackPort();
  work.write("/prometheus.yml", "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n  - " +
                                    kRules +
                                    "\nscrape_configs:\n  - job_name: vcpufold-hostd\n    static_configs:\n"
                                    "      - targets: ['127.0.0.1:" +
                                    std::to_string(port) + "']\n");
  ChildProcess prometheus("/usr/bin/prometheus",
                          {"--config.file=" + dir + "/prometheus.yml", "--storage.tsdb.path=" + dir + "/tsdb",
                           "--web.listen-address=127.0.0.1:" + std::to_string(prometheusPort)},
                          dir + "/prometheus.log");
  EXPECT_TRUE(
      waitUntil([&] { return instantValue(prometheusPort, "vcpufold_vm_hint_vcpus{vm=\"vm1\"}") == "1"; }, 30'000, 250))
      << runShell("tail -20 " + dir + "/prometheus.log");
  EXPECT_TRUE(waitUntil([&] { return instantValue(prometheusPort, "vcpufold:vm_folded_vcpus{vm=\"vm2\"}") == "3"; },
                        15'000, 250))
      << "the recording rule, evaluated on the scraped series";
  EXPECT_EQ(instantValue(prometheusPort, "up{job=\"vcpufold-hostd\"}"), "1");
  // Every rule has been evaluated against the live series without an error.
  std::string unhealthy;
  EXPECT_TRUE(waitUntil(
      [&] {
        const auto answer = nlohmann::json::parse(httpGetBody(prometheusPort, "/api/v1/rules"), nullptr, false);
        if (answer.is_discarded()) return false;
        int evaluated = 0;
        unhealthy.clear();
        for (const auto& group : answer["data"]["groups"])
          for (const auto& rule : group["rules"]) {
            if (rule.value("health", "") == "ok")
              ++evaluated;
            else
              unhealthy +=
                  rule.value("name", "?") + " " + rule.value("health", "") + " " + rule.value("lastError", "") + "; ";
          }
        return evaluated == 11;
      },
      15'000, 500))
      << unhealthy;
}
