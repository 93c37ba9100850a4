// SPDX-License-Identifier: GPL-2.0-or-later
// protocol::Session on its own, both roles, no sockets: the bytes one end
// would write are fed to the other, or checked as the peer would read them.

#include "vcpufold/protocol/session.h"

#include <gtest/gtest.h>

#include "vcpufold/protocol/codec.h"
#include "vcpufold/protocol/limits.h"

namespace vcpufold::protocol {
namespace {

using Kind = SessionEvent::Kind;
using std::chrono::milliseconds;

const SessionTime kStart = SessionTime{} + std::chrono::hours(1);
const std::string kReset(1, kResyncByte);

Hello hostHello(std::vector<std::uint32_t> versions = {1}) {
  return Hello{Role::Host, std::move(versions), "vcpufold-hostd test", std::nullopt};
}

Hello agentHello(std::vector<std::uint32_t> versions = {1}) {
  // 4 online vCPUs in 2 cores of 2 threads.
  return Hello{Role::Agent, std::move(versions), "vcpufold-agent test",
               AgentInfo{CpuSet{0, 1, 2, 3}, 2, 1, {Actuator::Cpuset, Actuator::None}, CpuSet{0, 1, 2, 3}, std::nullopt, true}};
}

std::string line(const Message& message) { return encodeMessage(message, 1).value(); }

// The messages in a session's frames, as the peer decodes them; a frame led
// by 0xFF is marked.
struct Written {
  Message message;
  bool ledByReset = false;
  bool isHint = false;
};
std::vector<Written> written(const SessionOutput& out) {
  std::vector<Written> messages;
  for (const auto& frame : out.frames) {
    std::string text = frame.bytes;
    const bool reset = !text.empty() && text.front() == kResyncByte;
    if (reset) text.erase(0, 1);
    EXPECT_FALSE(text.empty());
    EXPECT_EQ(text.back(), '\n');
    text.pop_back();
    const auto decoded = decodeMessage(text);
    EXPECT_TRUE(decoded) << text;
    if (decoded) messages.push_back({decoded.value().message, reset, frame.isHint});
  }
  return messages;
}

std::vector<Kind> kinds(const SessionOutput& out) {
  std::vector<Kind> all;
  for (const auto& event : out.events) all.push_back(event.kind);
  return all;
}

const SessionEvent* find(const SessionOutput& out, Kind kind) {
  for (const auto& event : out.events)
    if (event.kind == kind) return &event;
  return nullptr;
}

Hint hintOf(std::uint32_t vcpus, HintPolicy policy = HintPolicy::Auto) { return Hint{0, vcpus, 3000, policy, "test"}; }

// A host session that has said hello and heard the agent's, with a hint of 2 set.
struct ReadyHost {
  Session host;
  std::uint64_t firstSeq = 0;
  explicit ReadyHost(SessionLimits limits = {}) : host(hostHello(), limits) {
    host.setHint(hintOf(2), kStart);
    host.open(kStart);
    // After opening, what arrives up to the first newline or 0xFF is discarded:
    // an agent leads its hello with 0xFF.
    const auto out = host.feed(kReset + line(agentHello()), kStart);
    const auto sent = written(out);
    EXPECT_EQ(sent.size(), 1u);
    if (!sent.empty()) firstSeq = std::get<Hint>(sent[0].message).seq;
  }
};

}  // namespace

// What the owner reports of the bytes in flight when a deadline is judged.
constexpr Backlog kAnswerUnread{.fromPeerUnread = true};
constexpr Backlog kHintUnread{.toPeerUnread = true};

TEST(HostSession, OpenSaysHelloLedByAReset) {
  Session host(hostHello());
  const auto out = host.open(kStart);
  const auto sent = written(out);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_TRUE(sent[0].ledByReset);
  EXPECT_EQ(std::get<Hello>(sent[0].message).role, Role::Host);
  EXPECT_FALSE(host.ready());
  EXPECT_TRUE(host.setHint(hintOf(2), kStart).frames.empty()) << "no hint before the agent's hello";
}

TEST(HostSession, TheAgentsHelloAgreesAVersionAndIsAnsweredWithTheHintLedByAReset) {
  ReadyHost ready;
  EXPECT_TRUE(ready.host.ready());
  EXPECT_EQ(ready.host.version(), 1u);
  ASSERT_TRUE(ready.host.peerHello());
  EXPECT_EQ(ready.host.peerHello()->agent->online, (CpuSet{0, 1, 2, 3}));
  EXPECT_EQ(ready.firstSeq, 1u);
  EXPECT_FALSE(ready.host.cooperative()) << "a hello proves nothing";

  // The agent says hello again (it reopened its port): renegotiated, answered again.
  const auto again = ready.host.feed(kReset + line(agentHello()), kStart + milliseconds(10));
  ASSERT_NE(find(again, Kind::PeerReset), nullptr) << "mid-stream, the 0xFF before a hello is a reset";
  const auto* said = find(again, Kind::PeerHello);
  ASSERT_NE(said, nullptr);
  EXPECT_FALSE(said->first);
  const auto sent = written(again);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_TRUE(sent[0].ledByReset);
  EXPECT_TRUE(sent[0].isHint);
  EXPECT_EQ(std::get<Hint>(sent[0].message).seq, 2u);
}

TEST(HostSession, TheFirstBytesAfterOpeningAreAnEarlierSessionsTail) {
  Session host(hostHello());
  host.open(kStart);
  // No reset before the hello: it is taken for the tail of a line from before.
  auto out = host.feed(line(agentHello()), kStart);
  EXPECT_FALSE(host.ready());
  EXPECT_TRUE(out.events.empty());
  out = host.feed(line(agentHello()), kStart);
  EXPECT_TRUE(host.ready()) << "the next line is read";
}

TEST(HostSession, AValidAckMakesTheAgentCooperative) {
  ReadyHost ready;
  const auto out = ready.host.feed(line(Ack{ready.firstSeq, CpuSet{0, 1}, Actuator::Cpuset}), kStart);
  EXPECT_EQ(kinds(out), (std::vector<Kind>{Kind::Ack, Kind::Cooperative}));
  EXPECT_TRUE(ready.host.cooperative());
  ASSERT_TRUE(ready.host.lastAck());
  EXPECT_EQ(ready.host.lastAck()->applied, (CpuSet{0, 1}));
}

TEST(HostSession, AcksThatDoNotMatchAHintOfThisConnectionAreRefused) {
  ReadyHost ready;
  const std::uint64_t seq = ready.firstSeq;
  const std::pair<Ack, const char*> wrong[] = {
      {Ack{seq + 5, CpuSet{0, 1}, Actuator::Cpuset}, "not sent on this connection"},
      {Ack{seq, CpuSet{0, 7}, Actuator::Cpuset}, "applied CPUs 7 are not online"},
      {Ack{seq, CpuSet{0, 1, 2, 3}, Actuator::Cpuset}, "4 CPUs applied for a hint of 2"},
  };
  for (const auto& [ack, why] : wrong) {
    const auto out = ready.host.feed(line(ack), kStart);
    const auto* refused = find(out, Kind::ProtocolError);
    ASSERT_NE(refused, nullptr) << why;
    EXPECT_NE(refused->text.find(why), std::string::npos) << refused->text;
    EXPECT_FALSE(ready.host.cooperative()) << why;
  }
  // An agent that only observes may report every online CPU for any hint.
  const auto observing = ready.host.feed(line(Ack{seq, CpuSet{0, 1, 2, 3}, Actuator::None}), kStart);
  EXPECT_EQ(find(observing, Kind::ProtocolError), nullptr);
  EXPECT_TRUE(ready.host.cooperative());
  EXPECT_EQ(ready.host.stats().protocolErrors, 3u);
}

TEST(HostSession, AnOverdueAckEndsCooperationUntilTheAgentAcknowledgesAgain) {
  ReadyHost ready;
  ready.host.feed(line(Ack{ready.firstSeq, CpuSet{0, 1}, Actuator::Cpuset}), kStart);
  // The hint is renewed every tick; the agent stops answering.
  auto out = ready.host.tick(kStart + milliseconds(1000));
  ASSERT_EQ(written(out).size(), 1u) << "the lease renewed";
  const std::uint64_t unanswered = std::get<Hint>(written(out)[0].message).seq;
  out = ready.host.tick(kStart + milliseconds(4000));
  EXPECT_EQ(find(out, Kind::AckOverdue), nullptr) << "3 s since the unanswered hint, not more";
  out = ready.host.tick(kStart + milliseconds(4001));
  const auto* overdue = find(out, Kind::AckOverdue);
  ASSERT_NE(overdue, nullptr);
  EXPECT_EQ(overdue->text, "hint seq " + std::to_string(unanswered) + " not acknowledged in 3000 ms");
  EXPECT_FALSE(ready.host.cooperative());
  EXPECT_EQ(find(ready.host.tick(kStart + milliseconds(5000)), Kind::AckOverdue), nullptr) << "said once";
  out = ready.host.feed(line(Ack{unanswered, CpuSet{0, 1}, Actuator::Cpuset}), kStart + milliseconds(5100));
  EXPECT_EQ(kinds(out), (std::vector<Kind>{Kind::AcknowledgesAgain, Kind::Ack, Kind::Cooperative}));
  EXPECT_TRUE(ready.host.cooperative());
}

TEST(HostSession, AnAnswerWaitingUnreadWhenTheDeadlinePassesIsReadBeforeTheJudgement) {
  ReadyHost ready;
  ready.host.feed(line(Ack{ready.firstSeq, CpuSet{0, 1}, Actuator::Cpuset}), kStart);
  auto out = ready.host.tick(kStart + milliseconds(1000));
  const std::uint64_t renewed = std::get<Hint>(written(out)[0].message).seq;
  // The host's own loop ran late: past the deadline, with the agent's bytes unread.
  out = ready.host.tick(kStart + milliseconds(4500), kAnswerUnread);
  EXPECT_EQ(find(out, Kind::AckOverdue), nullptr) << "judged after the waiting bytes are read";
  EXPECT_TRUE(ready.host.cooperative());
  // They held the answer: no overdue at all.
  ready.host.feed(line(Ack{renewed, CpuSet{0, 1}, Actuator::Cpuset}), kStart + milliseconds(4501));
  EXPECT_EQ(find(ready.host.tick(kStart + milliseconds(5500)), Kind::AckOverdue), nullptr);
  EXPECT_TRUE(ready.host.cooperative());
}

TEST(HostSession, BytesKeptWaitingPutTheJudgementOffOneTickOnly) {
  ReadyHost ready;
  ready.host.feed(line(Ack{ready.firstSeq, CpuSet{0, 1}, Actuator::Cpuset}), kStart);
  ready.host.tick(kStart + milliseconds(1000));
  EXPECT_EQ(find(ready.host.tick(kStart + milliseconds(4500), kAnswerUnread), Kind::AckOverdue), nullptr);
  // A guest that keeps bytes waiting (a flood the read rate holds back) gains no more.
  const auto out = ready.host.tick(kStart + milliseconds(5500), kAnswerUnread);
  EXPECT_NE(find(out, Kind::AckOverdue), nullptr);
  EXPECT_FALSE(ready.host.cooperative());
}

TEST(HostSession, AHintTheGuestHasNotTakenByItsDeadlineIsAwaitedOneGraceLongerOnly) {
  ReadyHost ready;
  ready.host.feed(line(Ack{ready.firstSeq, CpuSet{0, 1}, Actuator::Cpuset}), kStart);
  auto out = ready.host.tick(kStart + milliseconds(1000));
  const std::uint64_t renewed = std::get<Hint>(written(out)[0].message).seq;
  // At the deadline our bytes still sit in the socket: the agent never got the hint.
  out = ready.host.checkDeadlines(kStart + milliseconds(4001), kHintUnread);
  EXPECT_EQ(find(out, Kind::AckOverdue), nullptr) << "the agent cannot answer what it never got";
  const auto* late = find(out, Kind::DeliveryLate);
  ASSERT_NE(late, nullptr);
  EXPECT_EQ(late->text, "hint seq " + std::to_string(renewed) +
                            " not yet read by the guest's side in 3000 ms: awaited 3000 ms longer");
  EXPECT_TRUE(ready.host.cooperative());
  EXPECT_EQ(ready.host.nextDeadline(), kStart + milliseconds(7001)) << "the grace ends the wait";
  // Taken at last and answered inside the grace: in time.
  ready.host.tick(kStart + milliseconds(5000), kHintUnread);
  ready.host.feed(line(Ack{renewed, CpuSet{0, 1}, Actuator::Cpuset}), kStart + milliseconds(5600));
  EXPECT_TRUE(ready.host.cooperative());

  // A guest's side that never takes the hint gains the grace once, no more.
  out = ready.host.tick(kStart + milliseconds(6000));
  const std::uint64_t next = std::get<Hint>(written(out)[0].message).seq;
  EXPECT_NE(find(ready.host.checkDeadlines(kStart + milliseconds(9001), kHintUnread), Kind::DeliveryLate), nullptr);
  EXPECT_EQ(find(ready.host.checkDeadlines(kStart + milliseconds(12000), kHintUnread), Kind::AckOverdue), nullptr)
      << "in time at the grace's end itself";
  out = ready.host.checkDeadlines(kStart + milliseconds(12001), kHintUnread);
  const auto* overdue = find(out, Kind::AckOverdue);
  ASSERT_NE(overdue, nullptr) << "still unread after the grace: judged all the same";
  EXPECT_EQ(overdue->text, "hint seq " + std::to_string(next) + " not acknowledged in 6000 ms");
  EXPECT_EQ(find(out, Kind::DeliveryLate), nullptr) << "once per hint";
  EXPECT_FALSE(ready.host.cooperative());
}

TEST(HostSession, TheTimeTheHostKeptTheGuestsSideWaitingIsAwaitedUpToItsCap) {
  ReadyHost ready;
  ready.host.feed(line(Ack{ready.firstSeq, CpuSet{0, 1}, Actuator::Cpuset}), kStart);
  auto out = ready.host.tick(kStart + milliseconds(1000));
  const std::uint64_t renewed = std::get<Hint>(written(out)[0].message).seq;
  EXPECT_EQ(ready.host.awaitedSince(), kStart + milliseconds(1000));
  // At the deadline QEMU's main loop had waited 1.5 s to run: awaited 1.5 s longer.
  out = ready.host.checkDeadlines(kStart + milliseconds(4001), Backlog{.peerSideWaited = milliseconds(1500)});
  EXPECT_EQ(find(out, Kind::AckOverdue), nullptr) << "the host, not the agent, used that time";
  const auto* waited = find(out, Kind::HostKeptPeerWaiting);
  ASSERT_NE(waited, nullptr);
  EXPECT_EQ(waited->text, "hint seq " + std::to_string(renewed) +
                              ": the host kept the guest's side waiting to run 1500 ms since it was sent: awaited "
                              "1500 ms longer");
  EXPECT_TRUE(ready.host.cooperative());
  EXPECT_EQ(ready.host.nextDeadline(), kStart + milliseconds(5501));
  // The wait went on: the deadline follows it, said once, up to the cap (6 s).
  out = ready.host.checkDeadlines(kStart + milliseconds(5501), Backlog{.peerSideWaited = milliseconds(2500)});
  EXPECT_EQ(find(out, Kind::AckOverdue), nullptr);
  EXPECT_EQ(find(out, Kind::HostKeptPeerWaiting), nullptr) << "once per hint";
  EXPECT_EQ(ready.host.nextDeadline(), kStart + milliseconds(6501));
  out = ready.host.checkDeadlines(kStart + milliseconds(6501), Backlog{.peerSideWaited = milliseconds(60'000)});
  EXPECT_EQ(find(out, Kind::AckOverdue), nullptr);
  EXPECT_EQ(ready.host.nextDeadline(), kStart + milliseconds(10'001)) << "capped at hostWaitGraceMax";
  out = ready.host.checkDeadlines(kStart + milliseconds(10'001), Backlog{.peerSideWaited = milliseconds(90'000)});
  const auto* overdue = find(out, Kind::AckOverdue);
  ASSERT_NE(overdue, nullptr) << "a host that starves the VM past the cap: judged all the same";
  EXPECT_EQ(overdue->text, "hint seq " + std::to_string(renewed) + " not acknowledged in 9000 ms");
  EXPECT_FALSE(ready.host.cooperative());
}

TEST(HostSession, TheHostsWaitCountsOnlyForTheHintItWasMeasuredFor) {
  ReadyHost ready;
  ready.host.feed(line(Ack{ready.firstSeq, CpuSet{0, 1}, Actuator::Cpuset}), kStart);
  auto out = ready.host.tick(kStart + milliseconds(1000));
  EXPECT_EQ(find(ready.host.checkDeadlines(kStart + milliseconds(4001), Backlog{.peerSideWaited = milliseconds(2000)}),
                 Kind::AckOverdue),
            nullptr);
  const std::uint64_t renewed = std::get<Hint>(written(out)[0].message).seq;
  ready.host.feed(line(Ack{renewed, CpuSet{0, 1}, Actuator::Cpuset}), kStart + milliseconds(5000));
  EXPECT_EQ(ready.host.awaitedSince(), std::nullopt) << "nothing awaited";
  // The next hint starts with no credit: with no wait measured it is judged at 3 s.
  ready.host.tick(kStart + milliseconds(6000));
  out = ready.host.checkDeadlines(kStart + milliseconds(9001));
  EXPECT_NE(find(out, Kind::AckOverdue), nullptr);
  // And a session whose cap is 0 never waits for the host.
  SessionLimits none;
  none.hostWaitGraceMax = milliseconds(0);
  ReadyHost strict(none);
  strict.host.feed(line(Ack{strict.firstSeq, CpuSet{0, 1}, Actuator::Cpuset}), kStart);
  strict.host.tick(kStart + milliseconds(1000));
  EXPECT_NE(find(strict.host.checkDeadlines(kStart + milliseconds(4001), Backlog{.peerSideWaited = milliseconds(2000)}),
                 Kind::AckOverdue),
            nullptr);
}

TEST(HostSession, AHintTakenInTimeIsJudgedAtItsDeadline) {
  ReadyHost ready;
  ready.host.feed(line(Ack{ready.firstSeq, CpuSet{0, 1}, Actuator::Cpuset}), kStart);
  ready.host.tick(kStart + milliseconds(1000), kHintUnread);
  // Unread at a tick before the deadline says nothing: only the deadline's own backlog counts.
  const auto out = ready.host.checkDeadlines(kStart + milliseconds(4001));
  EXPECT_NE(find(out, Kind::AckOverdue), nullptr);
  EXPECT_EQ(find(out, Kind::DeliveryLate), nullptr);
}

TEST(HostSession, ALateAnswerToAnEarlierHintDoesNotEndAnOverdueWait) {
  ReadyHost ready;
  ready.host.feed(line(Ack{ready.firstSeq, CpuSet{0, 1}, Actuator::Cpuset}), kStart);
  const auto sentSeq = [](const SessionOutput& out) {
    const auto messages = written(out);
    EXPECT_EQ(messages.size(), 1u);
    return messages.empty() ? 0 : std::get<Hint>(messages[0].message).seq;
  };
  // A starved agent: each renewal is answered more than a tick late.
  const std::uint64_t first = sentSeq(ready.host.tick(kStart + milliseconds(1000)));
  const std::uint64_t second = sentSeq(ready.host.tick(kStart + milliseconds(2000)));
  ready.host.feed(line(Ack{first, CpuSet{0, 1}, Actuator::Cpuset}), kStart + milliseconds(2100));
  const std::uint64_t third = sentSeq(ready.host.tick(kStart + milliseconds(3000)));
  ASSERT_LT(second, third);
  auto out = ready.host.tick(kStart + milliseconds(6001));
  const auto* overdue = find(out, Kind::AckOverdue);
  ASSERT_NE(overdue, nullptr);
  EXPECT_EQ(overdue->text, "hint seq " + std::to_string(third) + " not acknowledged in 3000 ms");
  ASSERT_FALSE(ready.host.cooperative());
  // The answer to the hint before the one awaited arrives: the agent was
  // keeping up then, which says nothing of now.
  out = ready.host.feed(line(Ack{second, CpuSet{0, 1}, Actuator::Cpuset}), kStart + milliseconds(6100));
  EXPECT_EQ(kinds(out), (std::vector<Kind>{Kind::Ack}));
  EXPECT_FALSE(ready.host.cooperative());
  EXPECT_EQ(find(ready.host.tick(kStart + milliseconds(7000)), Kind::AckOverdue), nullptr)
      << "the same overdue wait goes on; it is not ended and begun again";
  out = ready.host.feed(line(Ack{third, CpuSet{0, 1}, Actuator::Cpuset}), kStart + milliseconds(7100));
  EXPECT_EQ(kinds(out), (std::vector<Kind>{Kind::AcknowledgesAgain, Kind::Ack, Kind::Cooperative}));
  EXPECT_TRUE(ready.host.cooperative());
}

TEST(HostSession, HelloIsRepeatedUntilTheAgentAnswers) {
  Session host(hostHello());
  host.open(kStart);
  EXPECT_TRUE(host.tick(kStart + milliseconds(1999)).frames.empty());
  const auto again = written(host.tick(kStart + milliseconds(2000)));
  ASSERT_EQ(again.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<Hello>(again[0].message));
  EXPECT_TRUE(again[0].ledByReset);
  host.close();
  EXPECT_TRUE(host.tick(kStart + milliseconds(9000)).frames.empty()) << "nothing while closed";
}

TEST(HostSession, SaysItsNextDeadlineAndJudgesItWithoutRenewingTheLease) {
  Session unanswered(hostHello());
  EXPECT_EQ(unanswered.nextDeadline(), std::nullopt) << "closed: nothing falls due";
  unanswered.open(kStart);
  EXPECT_EQ(unanswered.nextDeadline(), kStart + milliseconds(2000)) << "hello again";
  ASSERT_EQ(written(unanswered.checkDeadlines(kStart + milliseconds(2000))).size(), 1u);
  EXPECT_EQ(unanswered.nextDeadline(), kStart + milliseconds(4000));

  ReadyHost ready;
  // The first hint went out with the agent's hello at kStart: its ack is awaited.
  EXPECT_EQ(ready.host.nextDeadline(), kStart + milliseconds(3001));
  EXPECT_TRUE(ready.host.checkDeadlines(kStart + milliseconds(3000)).events.empty()) << "in time at 3 s itself";
  const auto out = ready.host.checkDeadlines(kStart + milliseconds(3001));
  EXPECT_NE(find(out, Kind::AckOverdue), nullptr);
  EXPECT_TRUE(out.frames.empty()) << "a deadline is not a tick: no renewal";
  EXPECT_EQ(ready.host.nextDeadline(), std::nullopt) << "overdue: nothing more to judge until an ack";
  ready.host.feed(line(Ack{ready.firstSeq, CpuSet{0, 1}, Actuator::Cpuset}), kStart + milliseconds(3100));
  EXPECT_EQ(ready.host.nextDeadline(), std::nullopt) << "every hint acknowledged";
  ready.host.tick(kStart + milliseconds(4000));
  EXPECT_EQ(ready.host.nextDeadline(), kStart + milliseconds(7001)) << "the renewal's ack is awaited";
  // Bytes waiting unread at the deadline: the judgement waits for the next tick, not a deadline.
  EXPECT_EQ(find(ready.host.checkDeadlines(kStart + milliseconds(7001), kAnswerUnread), Kind::AckOverdue), nullptr);
  EXPECT_EQ(ready.host.nextDeadline(), std::nullopt);

  Session agent(agentHello());
  agent.open(kStart);
  EXPECT_EQ(agent.nextDeadline(), std::nullopt) << "an agent has no deadlines";
}

TEST(HostSession, ANewHintIsSentAtOnceTheSameOneWaitsForTheTick) {
  ReadyHost ready;
  EXPECT_TRUE(ready.host.setHint(hintOf(2), kStart).frames.empty());
  Hint sameVcpusOtherReason = hintOf(2);
  sameVcpusOtherReason.reason = "another reason";
  EXPECT_TRUE(ready.host.setHint(sameVcpusOtherReason, kStart).frames.empty());
  EXPECT_EQ(written(ready.host.setHint(hintOf(4), kStart)).size(), 1u);
  EXPECT_EQ(written(ready.host.setHint(hintOf(4, HintPolicy::Fixed), kStart)).size(), 1u);
  EXPECT_TRUE(ready.host.setHint(std::nullopt, kStart).frames.empty());
  EXPECT_TRUE(ready.host.tick(kStart + milliseconds(9000)).frames.empty()) << "no hint: nothing to renew";
  EXPECT_EQ(find(ready.host.tick(kStart + milliseconds(9001)), Kind::AckOverdue), nullptr)
      << "a withdrawn hint is owed no ack";
}

TEST(HostSession, AfterReopeningNothingOfTheOldConnectionCountsAndSeqKeepsGrowing) {
  ReadyHost ready;
  ready.host.feed(line(Ack{ready.firstSeq, CpuSet{0, 1}, Actuator::Cpuset}), kStart);
  ready.host.close();
  EXPECT_FALSE(ready.host.cooperative());
  EXPECT_FALSE(ready.host.ready());
  ready.host.open(kStart + milliseconds(100));
  const auto answer = written(ready.host.feed(kReset + line(agentHello()), kStart + milliseconds(100)));
  ASSERT_EQ(answer.size(), 1u);
  EXPECT_GT(std::get<Hint>(answer[0].message).seq, ready.firstSeq) << "a seq is never reused";
  const auto stale = ready.host.feed(line(Ack{ready.firstSeq, CpuSet{0, 1}, Actuator::Cpuset}), kStart);
  ASSERT_NE(find(stale, Kind::ProtocolError), nullptr);
  EXPECT_NE(find(stale, Kind::ProtocolError)->text.find("not sent on this connection"), std::string::npos);
  EXPECT_FALSE(ready.host.cooperative());
}

TEST(HostSession, NoCommonVersionIsToldOnceAndCounted) {
  Session host(hostHello());
  host.open(kStart);
  std::string hello = line(agentHello());
  hello.replace(hello.find("[1]"), 3, "[7]");
  const auto out = host.feed(kReset + hello, kStart);
  EXPECT_NE(find(out, Kind::VersionMismatch), nullptr);
  ASSERT_NE(find(out, Kind::ProtocolError), nullptr);
  const auto sent = written(out);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(std::get<ErrorMessage>(sent[0].message).reason, "no common protocol version");
  EXPECT_FALSE(host.ready());
}

TEST(HostSession, MessagesForTheOtherRoleAndStatusAndErrorsAreDispatched) {
  ReadyHost ready;
  auto out = ready.host.feed(line(Status{2.5, 300, 1000, CpuSet{0, 1}, Control::Host}), kStart);
  ASSERT_NE(find(out, Kind::Status), nullptr);
  EXPECT_EQ(std::get<Status>(*find(out, Kind::Status)->message).demand, 2.5);
  out = ready.host.feed(line(ErrorMessage{3, "apply failed"}), kStart);
  ASSERT_NE(find(out, Kind::PeerError), nullptr);
  EXPECT_EQ(ready.host.stats().peerErrors, 1u);
  Hint misdirected = hintOf(1);
  misdirected.seq = 1;
  out = ready.host.feed(line(misdirected), kStart);
  ASSERT_NE(find(out, Kind::ProtocolError), nullptr);
  EXPECT_EQ(find(out, Kind::ProtocolError)->text, "a hint is not sent to a host");
  out = ready.host.feed(line(hostHello()), kStart);
  ASSERT_NE(find(out, Kind::ProtocolError), nullptr);
  EXPECT_EQ(find(out, Kind::ProtocolError)->text, "hello.role: expected agent");
  EXPECT_TRUE(written(out).empty()) << "the host never answers a refusal";
}

TEST(HostSession, ResetAndOversizedFrames) {
  ReadyHost ready;
  // A partial line, then 0xFF: the partial line is gone, the next frame reads.
  auto out = ready.host.feed("{\"v\":1,\"type\":\"sta" + kReset + line(ErrorMessage{std::nullopt, "x"}), kStart);
  ASSERT_EQ(kinds(out), (std::vector<Kind>{Kind::PeerError, Kind::PeerReset}));
  EXPECT_EQ(out.events[1].count, 1u);
  out = ready.host.feed(std::string(kMaxFrameBytes + 10, 'a') + "\n", kStart);
  ASSERT_EQ(kinds(out), (std::vector<Kind>{Kind::ProtocolError}));
  EXPECT_EQ(out.events[0].text, "a frame longer than 4096 bytes, dropped");
}

TEST(HostSession, OverTheErrorBudgetTheRestOfTheBytesAreNotRead) {
  SessionLimits limits;
  limits.errorBudget = 5;
  Session host(hostHello(), limits);
  host.open(kStart);
  host.feed(kReset + line(agentHello()), kStart);
  std::string garbage;
  for (int i = 0; i < 6; ++i) garbage += "not json\n";
  garbage += line(Status{1, 0, 1000, CpuSet{0}, Control::Host});
  const auto out = host.feed(garbage, kStart);
  int refused = 0, firstInWindow = 0;
  for (const auto& event : out.events) {
    refused += event.kind == Kind::ProtocolError;
    firstInWindow += event.kind == Kind::ProtocolError && event.first;
  }
  EXPECT_EQ(refused, 6);
  EXPECT_EQ(firstInWindow, 1) << "one log line per window";
  ASSERT_FALSE(out.events.empty());
  EXPECT_EQ(out.events.back().kind, Kind::OverErrorBudget);
  EXPECT_EQ(out.events.back().text, "over the error budget (5 in 10 s)");
  EXPECT_EQ(find(out, Kind::Status), nullptr) << "nothing after the budget ran out";
  // A new window starts the count again.
  host.open(kStart + milliseconds(10'000));
  host.feed(kReset + line(agentHello()), kStart + milliseconds(10'000));
  const auto later = host.feed("not json\n", kStart + milliseconds(10'001));
  ASSERT_EQ(kinds(later), (std::vector<Kind>{Kind::ProtocolError}));
  EXPECT_TRUE(later.events[0].first);
}

TEST(AgentSession, OpenSaysHelloWithTheGuestsCpusAndEveryHostHelloIsAnswered) {
  Session agent(agentHello());
  auto sent = written(agent.open(kStart));
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_TRUE(sent[0].ledByReset);
  EXPECT_EQ(std::get<Hello>(sent[0].message).agent->online, (CpuSet{0, 1, 2, 3}));
  for (int round = 0; round < 2; ++round) {
    const auto out = agent.feed(kReset + line(hostHello()), kStart);
    ASSERT_NE(find(out, Kind::PeerHello), nullptr);
    EXPECT_EQ(find(out, Kind::PeerHello)->first, round == 0);
    sent = written(out);
    ASSERT_EQ(sent.size(), 1u) << "round " << round;
    EXPECT_TRUE(sent[0].ledByReset);
  }
  // What the agent says changes with what it applies.
  Hello changed = agentHello();
  changed.agent->preferred = CpuSet{0, 1};
  agent.setOwnHello(changed);
  sent = written(agent.sayHello(kStart));
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(std::get<Hello>(sent[0].message).agent->preferred, (CpuSet{0, 1}));
}

TEST(AgentSession, HintsAreHandedOverOtherMessagesAreRefusedWithAnError) {
  Session agent(agentHello());
  agent.open(kStart);
  agent.feed(kReset + line(hostHello()), kStart);
  Hint hint = hintOf(2);
  hint.seq = 9;
  auto out = agent.feed(line(hint), kStart);
  ASSERT_EQ(kinds(out), (std::vector<Kind>{Kind::Hint}));
  EXPECT_EQ(std::get<Hint>(*out.events[0].message).seq, 9u);
  EXPECT_TRUE(out.frames.empty()) << "the owner acknowledges once applied";
  EXPECT_EQ(written(agent.send(Ack{9, CpuSet{0, 1}, Actuator::Cpuset})).size(), 1u);

  out = agent.feed(line(Ack{1, CpuSet{0}, Actuator::Cpuset}), kStart);
  auto sent = written(out);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(std::get<ErrorMessage>(sent[0].message).reason, "type: ack is not sent to an agent");
  out = agent.feed(line(agentHello()), kStart);
  sent = written(out);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(std::get<ErrorMessage>(sent[0].message).reason, "hello.role: the agent talks to a host");
  // A refused hint is answered with its seq, so the host knows which.
  out = agent.feed("{\"v\":1,\"type\":\"hint\",\"seq\":12,\"vcpus\":0,\"ttl_ms\":3000,\"policy\":\"auto\"}\n", kStart);
  sent = written(out);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(std::get<ErrorMessage>(sent[0].message).seq, 12u);
  // Never an error for an error.
  out = agent.feed("{\"v\":1,\"type\":\"error\",\"reason\":7}\n", kStart);
  EXPECT_TRUE(out.frames.empty());
  EXPECT_NE(find(out, Kind::ProtocolError), nullptr);
}

TEST(AgentSession, ErrorRepliesAreRateLimitedAndTheSuppressedCounted) {
  SessionLimits limits;
  limits.errorRepliesPerSecond = 3;
  Session agent(agentHello(), limits);
  agent.open(kStart);
  agent.feed(kReset + line(hostHello()), kStart);
  std::string garbage;
  for (int i = 0; i < 5; ++i) garbage += "garbage\n";
  auto out = agent.feed(garbage, kStart);
  EXPECT_EQ(out.frames.size(), 3u);
  EXPECT_EQ(agent.stats().protocolErrors, 5u) << "every refusal is counted";
  out = agent.feed("garbage\n", kStart + milliseconds(1000));
  const auto* suppressed = find(out, Kind::RepliesSuppressed);
  ASSERT_NE(suppressed, nullptr);
  EXPECT_EQ(suppressed->count, 2u);
  EXPECT_EQ(out.frames.size(), 1u) << "a new second, a new allowance";
}

TEST(HostSession, ALaterHelloWithoutACommonVersionDropsWhatTheFirstAgreed) {
  ReadyHost ready;
  ASSERT_TRUE(ready.host.feed(line(Ack{ready.firstSeq, CpuSet{0, 1}, Actuator::Cpuset}), kStart).events.size() > 0);
  ASSERT_TRUE(ready.host.cooperative());
  std::string hello = line(agentHello());
  hello.replace(hello.find("[1]"), 3, "[7]");
  const auto out = ready.host.feed(hello, kStart + milliseconds(10));
  EXPECT_NE(find(out, Kind::VersionMismatch), nullptr);
  EXPECT_FALSE(ready.host.ready());
  EXPECT_FALSE(ready.host.cooperative()) << "cooperation was proven under the old agreement";
  EXPECT_FALSE(ready.host.peerHello()) << "nor do the CPUs it listed count";
  // No hint until a hello agrees: neither a renewal at the tick nor a new hint.
  for (int i = 1; i <= 3; ++i) {
    const auto tick = ready.host.tick(kStart + milliseconds(1000 * i));
    for (const auto& sent : written(tick)) EXPECT_FALSE(std::holds_alternative<Hint>(sent.message));
  }
  for (const auto& sent : written(ready.host.setHint(hintOf(3), kStart + milliseconds(4000))))
    EXPECT_FALSE(std::holds_alternative<Hint>(sent.message));
  // An ack of the old connection's hint proves nothing now.
  const auto late = ready.host.feed(line(Ack{ready.firstSeq, CpuSet{0, 1}, Actuator::Cpuset}), kStart);
  EXPECT_NE(find(late, Kind::ProtocolError), nullptr);
  EXPECT_FALSE(ready.host.cooperative());
  // A hello that agrees: answered with the current hint.
  const auto agreed = ready.host.feed(line(agentHello()), kStart + milliseconds(5000));
  EXPECT_TRUE(ready.host.ready());
  const auto sent = written(agreed);
  ASSERT_FALSE(sent.empty());
  EXPECT_EQ(std::get<Hint>(sent.back().message).vcpus, 3u);
}

TEST(AgentSession, NoCommonVersionIsAnsweredWithAnError) {
  Session agent(agentHello());
  agent.open(kStart);
  std::string hello = line(hostHello());
  hello.replace(hello.find("[1]"), 3, "[5,6]");
  const auto out = agent.feed(kReset + hello, kStart);
  EXPECT_NE(find(out, Kind::VersionMismatch), nullptr);
  const auto sent = written(out);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(std::get<ErrorMessage>(sent[0].message).reason, "no common protocol version");
  EXPECT_FALSE(agent.ready());
}

TEST(Sessions, AHostAndAnAgentTalkThroughEachOthersBytes) {
  Session host(hostHello());
  Session agent(agentHello());
  host.setHint(hintOf(2), kStart);
  // Both open; each one's first bytes reach the other.
  const auto fromHost = host.open(kStart);
  const auto fromAgent = agent.open(kStart);
  const auto toBytes = [](const SessionOutput& out) {
    std::string bytes;
    for (const auto& frame : out.frames) bytes += frame.bytes;
    return bytes;
  };
  const auto agentHeard = agent.feed(toBytes(fromHost), kStart);
  EXPECT_TRUE(agent.ready());
  const auto hostHeard = host.feed(toBytes(fromAgent) + toBytes(agentHeard), kStart);
  EXPECT_TRUE(host.ready());
  // The host's answer is the hint; the agent acknowledges it.
  const auto hintHeard = agent.feed(toBytes(hostHeard), kStart);
  const auto* hint = find(hintHeard, Kind::Hint);
  ASSERT_NE(hint, nullptr);
  const auto seq = std::get<Hint>(*hint->message).seq;
  const auto acked = host.feed(toBytes(agent.send(Ack{seq, CpuSet{0, 1}, Actuator::Cpuset})), kStart);
  EXPECT_NE(find(acked, Kind::Cooperative), nullptr);
  EXPECT_TRUE(host.cooperative());
}

}  // namespace vcpufold::protocol
