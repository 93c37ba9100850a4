// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/protocol/codec.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "vcpufold/protocol/limits.h"
#include "vcpufold/protocol/version.h"

using namespace vcpufold::protocol;
using nlohmann::json;

namespace {

Hello agentHello() {
  return Hello{Role::Agent, {1}, "vcpufold-agent 0.1.0",
               AgentInfo{CpuSet::range(0, 3), 2, 1, {Actuator::Cpuset, Actuator::None}, CpuSet::range(0, 3), std::nullopt, true}};
}

std::vector<Message> oneOfEach() {
  return {
      agentHello(),  // first: validJson("hello") breaks the hello with the most fields
      Hello{Role::Host, {1}, "vcpufold-hostd 0.1.0", std::nullopt},
      Hint{7, 2, 3000, HintPolicy::Auto, "share 1.5 of 2 pCPUs under contention"},
      Hint{kMaxSeq, 4096, 600000, HintPolicy::Off, "policy off"},
      Ack{7, CpuSet{0, 1}, Actuator::Cpuset},
      Status{2.75, 1234, 1000, CpuSet{0, 1}, Control::Host},
      Status{0.0, 0, 100, CpuSet{0}, Control::Fallback},
      ErrorMessage{7, "hint.vcpus: 0 is out of range 1..4096"},
      ErrorMessage{std::nullopt, "no common protocol version"},
  };
}

// A valid frame of each type as JSON, to break one field at a time.
json validJson(const std::string& type) {
  for (const auto& message : oneOfEach()) {
    if (messageTypeName(message) != type) continue;
    auto line = encodeMessage(message, kProtocolVersion);
    EXPECT_TRUE(line);
    return json::parse(*line);
  }
  ADD_FAILURE() << "no sample for " << type;
  return {};
}

DecodeError mustFail(const std::string& frame) {
  auto result = decodeMessage(frame);
  EXPECT_FALSE(result) << "accepted: " << frame;
  if (result) return {};
  return result.error();
}

}  // namespace

TEST(Codec, EveryMessageTypeRoundTrips) {
  for (const auto& message : oneOfEach()) {
    auto line = encodeMessage(message, kProtocolVersion);
    ASSERT_TRUE(line) << line.error().message;
    ASSERT_EQ(line->back(), '\n');
    ASSERT_LT(line->size(), kMaxFrameBytes + 1);
    auto decoded = decodeMessage(std::string_view(*line).substr(0, line->size() - 1));
    ASSERT_TRUE(decoded) << *line << " -> " << decoded.error().describe();
    EXPECT_EQ(decoded.value().message, message) << *line;
    EXPECT_EQ(decoded.value().version, kProtocolVersion);
  }
}

TEST(Codec, EveryMessageTypeMatchesItsFrameWrittenByHand) {
  // A field mis-mapped both ways (encoded under the wrong key and decoded
  // from it) still round-trips; frames written by hand, as protocol.md gives
  // them, do not.
  const std::vector<std::pair<std::string, Message>> frames = {
      {R"({"v":1,"type":"hello","role":"agent","versions":[1],"software":"vcpufold-agent 0.1.0","online":"0-3",)"
       R"("threads_per_core":2,"numa_nodes":1,"actuators":["cpuset","none"],"preferred":"0-3"})",
       agentHello()},
      {R"({"v":1,"type":"hello","role":"host","versions":[1],"software":"vcpufold-hostd 0.1.0"})",
       Hello{Role::Host, {1}, "vcpufold-hostd 0.1.0", std::nullopt}},
      {R"({"v":1,"type":"hint","seq":7,"vcpus":2,"ttl_ms":3000,"policy":"auto","reason":"share 1.5 of 2 pCPUs under contention"})",
       Hint{7, 2, 3000, HintPolicy::Auto, "share 1.5 of 2 pCPUs under contention"}},
      {R"({"v":1,"type":"hint","seq":12,"vcpus":16,"ttl_ms":3000,"policy":"fixed","reason":"policy fixed"})",
       Hint{12, 16, 3000, HintPolicy::Fixed, "policy fixed"}},
      {R"({"v":1,"type":"ack","seq":7,"applied":"0-1","actuator":"cpuset"})", Ack{7, CpuSet{0, 1}, Actuator::Cpuset}},
      {R"({"v":1,"type":"status","demand":2.75,"steal_bp":1234,"interval_ms":1000,"preferred":"0-1","control":"host"})",
       Status{2.75, 1234, 1000, CpuSet{0, 1}, Control::Host}},
      {R"({"v":1,"type":"status","demand":0.0,"steal_bp":0,"interval_ms":100,"preferred":"0","control":"fallback"})",
       Status{0.0, 0, 100, CpuSet{0}, Control::Fallback}},
      {R"({"v":1,"type":"error","seq":7,"reason":"hint.vcpus: 0 is out of range 1..4096"})",
       ErrorMessage{7, "hint.vcpus: 0 is out of range 1..4096"}},
      {R"({"v":1,"type":"error","reason":"no common protocol version"})",
       ErrorMessage{std::nullopt, "no common protocol version"}},
  };
  for (const auto& [frame, message] : frames) {
    const auto decoded = decodeMessage(frame);
    ASSERT_TRUE(decoded) << frame << " -> " << decoded.error().describe();
    EXPECT_EQ(decoded.value().message, message) << frame;
    const auto line = encodeMessage(message, kProtocolVersion);
    ASSERT_TRUE(line) << line.error().message;
    EXPECT_EQ(json::parse(*line), json::parse(frame)) << "written: " << *line << "by hand: " << frame;
  }
}

TEST(Codec, OutOfRangeFieldsAreRejectedByName) {
  struct Case {
    std::string type, field;
    json value;
  };
  const std::vector<Case> cases{
      {"hint", "seq", 0},           {"hint", "seq", kMaxSeq + 1},  {"hint", "seq", -1},
      {"hint", "seq", 1.5},         {"hint", "seq", "7"},          {"hint", "vcpus", 0},
      {"hint", "vcpus", 4097},      {"hint", "vcpus", 2.0},        {"hint", "ttl_ms", 99},
      {"hint", "ttl_ms", 600001},   {"hint", "policy", "guest"},   {"hint", "policy", 1},
      {"hint", "reason", ""},       {"hint", "reason", std::string(257, 'r')},
      {"hint", "reason", "tab\there"},
      {"ack", "seq", 0},            {"ack", "applied", ""},        {"ack", "applied", "0-3,2"},
      {"ack", "applied", "4096"},   {"ack", "actuator", "magic"},  {"ack", "applied", 3},
      {"status", "demand", -0.5},   {"status", "demand", 65536.5}, {"status", "demand", "1"},
      {"status", "steal_bp", 10001}, {"status", "interval_ms", 99}, {"status", "interval_ms", 100001},
      {"status", "preferred", ""},  {"status", "control", "kernel"},
      {"error", "seq", 0},          {"error", "reason", ""},       {"error", "reason", std::string(257, 'e')},
      {"hello", "role", "guest"},   {"hello", "versions", json::array()},
      {"hello", "versions", json::array({0})}, {"hello", "versions", json::array({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17})},
      {"hello", "versions", 1},     {"hello", "software", ""},     {"hello", "software", std::string(65, 's')},
      {"hello", "online", ""},      {"hello", "threads_per_core", 0}, {"hello", "threads_per_core", 9},
      {"hello", "numa_nodes", 0},   {"hello", "numa_nodes", 1025}, {"hello", "actuators", json::array({"cpuset", "cpuset"})},
      {"hello", "actuators", json::array({"gpu"})}, {"hello", "preferred", "0-7"},
  };
  for (const auto& c : cases) {
    json frame = validJson(c.type);
    frame[c.field] = c.value;
    const auto error = mustFail(frame.dump());
    EXPECT_EQ(error.field, c.type + "." + c.field) << frame.dump() << " -> " << error.describe();
    EXPECT_FALSE(error.reason.empty());
  }
}

TEST(Codec, MissingRequiredFieldsAreNamed) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> required{
      {"hello", {"role", "versions", "software", "online", "threads_per_core", "numa_nodes", "actuators", "preferred"}},
      {"hint", {"seq", "vcpus", "ttl_ms", "policy", "reason"}},
      {"ack", {"seq", "applied", "actuator"}},
      {"status", {"demand", "steal_bp", "interval_ms", "preferred", "control"}},
      {"error", {"reason"}},
  };
  for (const auto& [type, fields] : required) {
    for (const auto& field : fields) {
      json frame = validJson(type);
      frame.erase(field);
      const auto error = mustFail(frame.dump());
      EXPECT_EQ(error.describe(), type + "." + field + ": missing");
    }
    json frame = validJson(type);
    frame.erase("v");
    EXPECT_EQ(mustFail(frame.dump()).describe(), "v: missing");
    frame = validJson(type);
    frame.erase("type");
    EXPECT_EQ(mustFail(frame.dump()).describe(), "type: missing");
  }
}

TEST(Codec, HostHelloNeedsNoGuestFacts) {
  auto decoded = decodeMessage(R"({"v":1,"type":"hello","role":"host","versions":[1],"software":"x"})");
  ASSERT_TRUE(decoded) << decoded.error().describe();
  EXPECT_FALSE(std::get<Hello>(decoded.value().message).agent);
}

TEST(Codec, UnknownFieldsAreIgnored) {
  json frame = validJson("hint");
  frame["future_field"] = {{"nested", json::array({1, 2})}};
  frame["x"] = nullptr;
  auto decoded = decodeMessage(frame.dump());
  ASSERT_TRUE(decoded) << decoded.error().describe();
  EXPECT_EQ(std::get<Hint>(decoded.value().message).seq, 7u);
}

TEST(Codec, AnAgentHelloMaySayItsKernelClassAndThatAutoHintsDoNotFoldIt) {
  // Without the optional fields (an older agent): no class, auto hints fold it.
  json frame = validJson("hello");
  auto decoded = decodeMessage(frame.dump());
  ASSERT_TRUE(decoded) << decoded.error().describe();
  EXPECT_FALSE(std::get<Hello>(decoded.value().message).agent->kernelClass);
  EXPECT_TRUE(std::get<Hello>(decoded.value().message).agent->foldsOnAutoHints);

  // The wire names, read from text (not only a round trip of the encoder).
  frame["kernel_class"] = "stock-6.6-and-later";
  frame["auto_fold"] = false;
  decoded = decodeMessage(frame.dump());
  ASSERT_TRUE(decoded) << decoded.error().describe();
  const AgentInfo& agent = *std::get<Hello>(decoded.value().message).agent;
  EXPECT_EQ(agent.kernelClass, "stock-6.6-and-later");
  EXPECT_FALSE(agent.foldsOnAutoHints);
  frame["auto_fold"] = true;
  decoded = decodeMessage(frame.dump());
  ASSERT_TRUE(decoded) << decoded.error().describe();
  EXPECT_TRUE(std::get<Hello>(decoded.value().message).agent->foldsOnAutoHints);

  // The encoder writes both names, and auto_fold only when false.
  Hello hello = agentHello();
  hello.agent->kernelClass = "stock-before-6.6";
  hello.agent->foldsOnAutoHints = false;
  const json written = json::parse(encodeMessage(hello, kProtocolVersion).value());
  EXPECT_EQ(written.at("kernel_class"), "stock-before-6.6");
  EXPECT_EQ(written.at("auto_fold"), false);
  hello.agent->foldsOnAutoHints = true;
  EXPECT_FALSE(json::parse(encodeMessage(hello, kProtocolVersion).value()).contains("auto_fold"));

  // A class is a name for logs and labels; auto_fold is a boolean.
  for (const json& bad : {json("Stock 6.1"), json(""), json(std::string(33, 'a')), json("a\"b"), json(6)}) {
    json broken = validJson("hello");
    broken["kernel_class"] = bad;
    EXPECT_EQ(mustFail(broken.dump()).field, "hello.kernel_class") << bad.dump();
  }
  for (const json& bad : {json(0), json("false"), json(nullptr)}) {
    json broken = validJson("hello");
    broken["auto_fold"] = bad;
    EXPECT_EQ(mustFail(broken.dump()).field, "hello.auto_fold") << bad.dump();
  }
}

TEST(Codec, UnknownTypeIsAnError) {
  const auto error = mustFail(R"({"v":1,"type":"reboot","seq":9})");
  EXPECT_EQ(error.field, "type");
  EXPECT_EQ(error.seq, 9u);
  EXPECT_EQ(mustFail(R"({"v":1,"type":7})").field, "type");
}

TEST(Codec, UnsupportedVersionIsAnError) {
  json frame = validJson("hint");
  for (json version : {json(0), json(2), json(-1), json(1.0), json("1"), json(70000)}) {
    frame["v"] = version;
    const auto error = mustFail(frame.dump());
    EXPECT_EQ(error.field, "v") << version;
    EXPECT_EQ(error.seq, 7u) << "the reply must still be able to name the hint";
  }
}

TEST(Codec, RejectedHintKeepsItsSeqForTheReply) {
  const auto error = mustFail(R"({"v":1,"type":"hint","seq":42,"vcpus":0,"ttl_ms":1000,"policy":"auto","reason":"r"})");
  EXPECT_EQ(error.describe(), "hint.vcpus: 0 is out of range 1..4096");
  EXPECT_EQ(error.seq, 42u);
  EXPECT_EQ(error.type, "hint");
}

TEST(Codec, HostileFrames) {
  // Not JSON, not an object, truncated.
  for (const char* frame : {"", "{", "}", "[]", "1", "\"hint\"", "null", "{\"v\":1,", "{}{}", "{} x",
                            "{\"v\":1,\"type\":\"hint\"", "{'v':1}", "{\"v\":1,}"}) {
    EXPECT_FALSE(decodeMessage(frame)) << frame;
  }
  // NUL bytes, inside and outside strings.
  EXPECT_FALSE(decodeMessage(std::string("{\"v\":1,\0\"type\":\"error\",\"reason\":\"x\"}", 35)));
  EXPECT_FALSE(decodeMessage(std::string("{\"v\":1,\"type\":\"error\",\"reason\":\"a\0b\"}", 37)));
  EXPECT_FALSE(decodeMessage(R"({"v":1,"type":"error","reason":"a\u0000b"})"));
  // Invalid UTF-8 in a string and as bare bytes; the error itself stays printable.
  for (const std::string& frame : {std::string("{\"v\":1,\"type\":\"error\",\"reason\":\"\xc3\x28\"}"),
                                   std::string("{\"v\":1,\"type\":\"error\",\"reason\":\"\xed\xa0\x80\"}"),
                                   std::string("\xfe\xfe{}")}) {
    const auto error = mustFail(frame);
    for (char c : error.describe()) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << error.describe();
  }
  // Numbers beyond int64 and uint64.
  EXPECT_EQ(mustFail(R"({"v":1,"type":"hint","seq":9223372036854775808,"vcpus":1,"ttl_ms":1000,"policy":"auto","reason":"r"})").field, "hint.seq");
  EXPECT_EQ(mustFail(R"({"v":1,"type":"hint","seq":1,"vcpus":99999999999999999999999,"ttl_ms":1000,"policy":"auto","reason":"r"})").field, "hint.vcpus");
  EXPECT_EQ(mustFail(R"({"v":1,"type":"status","demand":1e400,"steal_bp":0,"interval_ms":1000,"preferred":"0","control":"none"})").field, "");
  EXPECT_EQ(mustFail(R"({"v":1,"type":"status","demand":1e300,"steal_bp":0,"interval_ms":1000,"preferred":"0","control":"none"})").field, "status.demand");
  // Duplicate keys, at the top and inside.
  EXPECT_NE(mustFail(R"({"v":1,"type":"error","reason":"a","reason":"b"})").reason.find("duplicate key"), std::string::npos);
  EXPECT_NE(mustFail(R"({"v":1,"type":"error","reason":"a","x":{"k":1,"k":2}})").reason.find("duplicate key"), std::string::npos);
  // An oversized frame handed straight to the codec.
  EXPECT_FALSE(decodeMessage("{\"v\":1,\"type\":\"error\",\"reason\":\"" + std::string(kMaxFrameBytes, 'a') + "\"}"));
}

TEST(Codec, NestingTenThousandDeep) {
  // 10,000 levels cannot fit a frame: refused on size, before any parsing.
  const std::string deepArrays = std::string(10000, '[') + std::string(10000, ']');
  EXPECT_NE(mustFail(deepArrays).reason.find("exceeds"), std::string::npos);
  // The deepest nesting that fits a frame is refused by the nesting scan.
  const std::string arrays = std::string(2000, '[') + std::string(2000, ']');
  ASSERT_LT(arrays.size(), kMaxFrameBytes);
  EXPECT_NE(mustFail(arrays).reason.find("nesting"), std::string::npos);
  std::string objects;
  for (int i = 0; i < 600; ++i) objects += "{\"a\":";
  objects += "1" + std::string(600, '}');
  ASSERT_LT(objects.size(), kMaxFrameBytes);
  EXPECT_NE(mustFail(objects).reason.find("nesting"), std::string::npos);
  // Nine levels is one too many; brackets inside strings are not nesting.
  EXPECT_NE(mustFail(R"({"v":1,"type":"error","reason":"x","n":[[[[[[[[1]]]]]]]]})").reason.find("nesting"),
            std::string::npos);
  EXPECT_TRUE(decodeMessage(R"({"v":1,"type":"error","reason":"x","n":[[[[[[[1]]]]]]]})"));
  json frame = validJson("error");
  frame["reason"] = std::string(200, '[');
  EXPECT_TRUE(decodeMessage(frame.dump())) << frame.dump();
}

TEST(Codec, EncoderRefusesWhatTheDecoderWouldRefuse) {
  const std::vector<Message> invalid{
      Hint{0, 2, 1000, HintPolicy::Auto, "seq 0"},
      Hint{1, 0, 1000, HintPolicy::Auto, "no cpus"},
      Hint{1, 2, 1000, HintPolicy::Auto, ""},
      Hint{1, 2, 1000, HintPolicy::Auto, std::string(300, 'x')},
      Hint{1, 2, 1000, HintPolicy::Auto, "bad \xc3\x28 utf-8"},
      Ack{1, CpuSet{}, Actuator::Cpuset},
      Status{std::numeric_limits<double>::quiet_NaN(), 0, 1000, CpuSet{0}, Control::None},
      Status{1.0, 0, 1000, CpuSet{0}, static_cast<Control>(99)},
      Hello{Role::Host, {1}, "hostd", AgentInfo{}},  // a host hello cannot carry guest facts
      Hello{Role::Agent, {1}, "agent", std::nullopt},
  };
  for (const auto& message : invalid) {
    auto line = encodeMessage(message, kProtocolVersion);
    EXPECT_FALSE(line) << "encoded: " << *line;
    if (!line) {
      EXPECT_NE(line.error().message.find("cannot encode"), std::string::npos);
    }
  }
}

TEST(Codec, HelloIsAlwaysWrittenAsVersionOne) {
  auto line = encodeMessage(Hello{Role::Host, {1}, "hostd", std::nullopt}, 9);
  ASSERT_TRUE(line) << line.error().message;
  EXPECT_EQ(json::parse(*line)["v"], kHelloVersion);
  EXPECT_FALSE(encodeMessage(Hint{1, 1, 1000, HintPolicy::Auto, "r"}, 9)) << "v9 is not spoken";
}

TEST(Codec, RandomMessagesRoundTripOrAreRefused) {
  std::mt19937_64 random(7);
  auto pick = [&random](std::uint64_t low, std::uint64_t high) { return low + random() % (high - low + 1); };
  int encoded = 0;
  for (int round = 0; round < 3000; ++round) {
    Message message;
    switch (round % 5) {
      case 0:
        message = Hint{pick(0, kMaxSeq + 1), static_cast<std::uint32_t>(pick(0, 5000)),
                       static_cast<std::uint32_t>(pick(0, 700000)), static_cast<HintPolicy>(pick(0, 2)),
                       std::string(pick(0, 300), 'r')};
        break;
      case 1: {
        CpuSet applied;
        for (std::uint64_t i = pick(0, 6); i > 0; --i) applied.insert(static_cast<unsigned>(pick(0, 5000)));
        message = Ack{pick(0, 100), applied, static_cast<Actuator>(pick(0, 2))};
        break;
      }
      case 2:
        message = Status{static_cast<double>(pick(0, 1000000)) / 7.0, static_cast<std::uint32_t>(pick(0, 11000)),
                         static_cast<std::uint32_t>(pick(0, 200000)), CpuSet::range(0, static_cast<unsigned>(pick(0, 9))),
                         static_cast<Control>(pick(0, 2))};
        break;
      case 3:
        message = ErrorMessage{pick(0, 1) ? std::optional<std::uint64_t>(pick(0, 10)) : std::nullopt,
                               std::string(pick(0, 300), 'e')};
        break;
      default: {
        const unsigned online = static_cast<unsigned>(pick(0, 64));
        message = Hello{Role::Agent, {static_cast<std::uint32_t>(pick(0, 2))}, "agent",
                        AgentInfo{CpuSet::range(0, online), static_cast<std::uint32_t>(pick(0, 9)),
                                  static_cast<std::uint32_t>(pick(0, 4)), {Actuator::None},
                                  CpuSet::range(0, static_cast<unsigned>(pick(0, 70))),
                                  pick(0, 2) == 0 ? std::nullopt
                                                  : std::optional<std::string>(std::string(pick(0, 40), 'k')),
                                  pick(0, 1) == 1}};
      }
    }
    auto line = encodeMessage(message, kProtocolVersion);
    if (!line) continue;
    ++encoded;
    auto decoded = decodeMessage(std::string_view(*line).substr(0, line->size() - 1));
    ASSERT_TRUE(decoded) << *line << ": " << decoded.error().describe();
    ASSERT_EQ(decoded.value().message, message) << *line;
  }
  EXPECT_GT(encoded, 300) << "the generator should produce many valid messages";
}
