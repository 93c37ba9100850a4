// SPDX-License-Identifier: GPL-2.0-or-later
// What QEMU's monitor answers, read strictly: query-cpus-fast from a real
// QEMU, and the shapes a hostile or broken monitor may send instead.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "vcpufold/hostd/qmp_client.h"

namespace vcpufold::hostd {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(VCPUFOLD_SOURCE_DIR) + "/tests/fixtures/libvirt-tcg-host/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST(QueryCpusFast, ARealAnswerGivesEveryVcpuThread) {
  const std::string line = fixture("fixture-a.query-cpus-fast.json");
  ASSERT_FALSE(line.empty());
  const auto message = parseQmpMessage(line);
  ASSERT_TRUE(message) << message.error().message;
  ASSERT_EQ(message->kind, QmpMessage::Kind::Return);
  const auto vcpus = parseQueryCpusJson(message->text);
  ASSERT_TRUE(vcpus) << vcpus.error().message;
  EXPECT_EQ(*vcpus, (std::vector<QmpVcpu>{{0, 17077}, {1, 17078}, {2, 17079}, {3, 17080}}));
}

TEST(QueryCpusFast, OrderedByCpuIndexWhateverTheAnswersOrder) {
  const auto vcpus = parseQueryCpusJson(R"([{"cpu-index":1,"thread-id":11},{"cpu-index":0,"thread-id":10}])");
  ASSERT_TRUE(vcpus);
  EXPECT_EQ(*vcpus, (std::vector<QmpVcpu>{{0, 10}, {1, 11}}));
  EXPECT_EQ(parseQueryCpusJson("[]")->size(), 0u);
}

TEST(QueryCpusFast, EveryOtherShapeIsAnError) {
  for (const char* bad : {
           R"({"cpu-index":0,"thread-id":10})",            // not an array
           R"([{"cpu-index":0}])",                         // no thread
           R"([{"thread-id":10}])",                        // no index
           R"([{"cpu-index":-1,"thread-id":10}])",         // negative index
           R"([{"cpu-index":0,"thread-id":0}])",           // no such thread
           R"([{"cpu-index":0,"thread-id":-5}])",          // nor this
           R"([{"cpu-index":0,"thread-id":"10"}])",        // a string
           R"([{"cpu-index":0.5,"thread-id":10}])",        // a fraction
           R"([{"cpu-index":4096,"thread-id":10}])",       // beyond the CPUs a hint can name
           R"([{"cpu-index":0,"thread-id":4294967296}])",  // beyond a pid
           R"([{"cpu-index":0,"thread-id":10},{"cpu-index":0,"thread-id":11}])",  // one vCPU twice
           R"([{"cpu-index":0,"thread-id":10},{"cpu-index":1,"thread-id":10}])",  // one thread for two vCPUs
           R"([3])",
           R"([null])",
           "not json",
           "",
       }) {
    const auto vcpus = parseQueryCpusJson(bad);
    EXPECT_FALSE(vcpus) << bad;
    if (!vcpus) {
      EXPECT_EQ(vcpus.error().message.rfind("query-cpus-fast: ", 0), 0u) << vcpus.error().message;
    }
  }
}

TEST(QmpMessage, EachKindOfLineIsTold) {
  const auto greeting = parseQmpMessage(R"({"QMP":{"version":{"qemu":{"major":7}},"capabilities":[]}})");
  ASSERT_TRUE(greeting);
  EXPECT_EQ(greeting->kind, QmpMessage::Kind::Greeting);
  const auto error = parseQmpMessage(R"({"error":{"class":"CommandNotFound","desc":"no such command"}})");
  ASSERT_TRUE(error);
  EXPECT_EQ(error->kind, QmpMessage::Kind::Error);
  EXPECT_EQ(error->text, "no such command");
  const auto event = parseQmpMessage(
      R"({"event":"VSERPORT_CHANGE","data":{"id":"channel1","open":true},"timestamp":{"seconds":1,"microseconds":2}})");
  ASSERT_TRUE(event);
  EXPECT_EQ(event->kind, QmpMessage::Kind::Event);
  EXPECT_EQ(event->text, "VSERPORT_CHANGE");
  EXPECT_NE(event->detailJson.find("\"open\":true"), std::string::npos) << event->detailJson;
  EXPECT_FALSE(parseQmpMessage("[1,2]")) << "not an object";
  EXPECT_FALSE(parseQmpMessage("{\"return\":")) << "not JSON";
  std::string deep(40, '[');
  deep += std::string(40, ']');
  EXPECT_FALSE(parseQmpMessage("{\"return\":" + deep + "}")) << "nested deeper than 32";
}

}  // namespace vcpufold::hostd
