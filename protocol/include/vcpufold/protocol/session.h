// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Session: one end of a vcpufold channel, host or agent, as a pure state
// machine. No sockets, no clock: the owner hands it the bytes it read and the
// time, and writes what it returns. Both daemons are thin shells around it
// (hostd's ChannelSession over Asio, the agent's poll loop), so the protocol
// is specified, changed and tested in one place (docs/protocol.md):
//   - framing: bounded frames, the 0xFF reset, and after the transport
//     (re)opens the discard of an earlier session's tail;
//   - hello on every open (led by 0xFF), version negotiation, an error
//     answer when no version is shared;
//   - dispatch of every message to the role it is for; a message sent to the
//     wrong role is a protocol error;
//   - host: hint sequence numbers, the hints of this connection kept to check
//     acks against (online CPUs, no more than the hint allowed), the ack
//     deadline that makes an agent not cooperative, hello repeated while the
//     agent has not answered, the error budget;
//   - agent: every host hello answered with its own, refused frames answered
//     with an error frame (never an error with an error), at a bounded rate.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vcpufold/protocol/frame_decoder.h"
#include "vcpufold/protocol/messages.h"

namespace vcpufold::protocol {

using SessionTime = std::chrono::steady_clock::time_point;

struct SessionLimits {
  std::chrono::milliseconds ackTimeout{3'000};   // host: a hint unacknowledged this long: not cooperative
  // host: how much longer a hint is awaited when, at its deadline, the
  // guest's side had not yet read it off the host's socket (the agent cannot
  // answer what it never got); judged then whatever the socket holds.
  std::chrono::milliseconds deliveryGrace{3'000};
  // host: at most this much longer a hint is awaited for the time the host
  // itself kept the guest's side from running since it was sent
  // (Backlog::peerSideWaited): time the host did not give the VM is not the
  // agent's lateness. 0: never.
  std::chrono::milliseconds hostWaitGraceMax{6'000};
  std::chrono::milliseconds helloRepeat{2'000};  // host: hello again while the agent has not said hello
  int errorBudget = 20;                          // host: refused frames per errorWindow; more: OverErrorBudget
  std::chrono::milliseconds errorWindow{10'000};
  int errorRepliesPerSecond = 10;    // agent: error frames sent to the host per second; more are counted
  std::size_t rememberedHints = 32;  // host: hints of this connection kept to check acks against
};

struct SessionEvent {
  enum class Kind {
    PeerHello,            // a hello agreed a version; first: the connection's first
    VersionMismatch,      // a hello shares no version with ours (answered with an error frame)
    Hint,                 // agent: a hint to apply, then acknowledge with send(Ack)
    Ack,                  // host: a valid acknowledgement of a hint of this connection
    Status,               // host: the agent's status report
    PeerError,            // the peer sent an error frame
    PeerReset,            // the peer reset the stream with 0xFF (count: how many times in these bytes)
    ProtocolError,        // a frame was refused; text says why
    OverErrorBudget,      // host: more refused frames than the budget; the owner disconnects for a while
    AckOverdue,           // host: the oldest unacknowledged hint is older than ackTimeout: not cooperative
    AcknowledgesAgain,    // host: an agent that was overdue acknowledged
    DeliveryLate,         // host: at its deadline the awaited hint was still unread by the guest's side; awaited longer
    HostKeptPeerWaiting,  // host: at its deadline the host had kept the guest's side waiting to run; awaited that much
                          // longer
    Cooperative,          // host: an agent became cooperative on this connection (an acknowledged hint)
    RepliesSuppressed,    // agent: error replies left out by the rate limit (count)
    EncodeFailed,         // a message of ours could not be encoded; text says why (a bug, not the peer's)
  };
  Kind kind;
  std::string text;                // a line for the log, peer strings not yet escaped
  std::optional<Message> message;  // the message the event is about, where there is one
  bool first = false;              // PeerHello: first on this connection; ProtocolError: first in its error window
  std::uint64_t count = 0;         // RepliesSuppressed, PeerReset: how many
};

// A frame to write; a hint is marked so a writer whose queue is backed up can
// replace an unsent older hint with the newer one.
struct OutboundFrame {
  std::string bytes;
  bool isHint = false;
};

struct SessionOutput {
  std::vector<OutboundFrame> frames;  // to write, in order
  std::vector<SessionEvent> events;
};

// What the owner knows of the bytes in flight when the session judges a deadline.
struct Backlog {
  // Bytes from the agent the owner has not fed yet (its own loop ran late).
  bool fromPeerUnread = false;
  // Bytes of ours the peer's side has not read yet (for a VM: QEMU has not
  // taken them off the socket, so the guest has not seen them).
  bool toPeerUnread = false;
  // How long, since the awaited hint was sent, the host kept the peer's side
  // runnable but not running (for a VM: the run-queue wait of QEMU's main
  // loop, which takes the hint off the socket, passes the answer back and,
  // under TCG, fires the guest's timers). 0: none, or not known.
  std::chrono::milliseconds peerSideWaited{0};
};

struct SessionStats {
  std::uint64_t framesIn = 0;
  std::uint64_t protocolErrors = 0;  // frames refused
  std::uint64_t hintsSent = 0;
  std::uint64_t peerErrors = 0;  // error frames received
};

class Session {
 public:
  // ownHello is what this end says: its role (which decides how the session
  // behaves), the versions it speaks, its software and, for an agent, its CPUs.
  explicit Session(Hello ownHello, SessionLimits limits = {});

  // The transport (re)opened: forget the connection before, discard the
  // earlier session's tail, say hello.
  SessionOutput open(SessionTime now);
  // The transport closed: nothing of this connection is evidence any more.
  void close();
  // Bytes from the peer. Stops early after OverErrorBudget (the owner closes).
  SessionOutput feed(std::string_view bytes, SessionTime now);
  // Timers. Host: hello again while unanswered, the ack deadline, and the
  // current hint sent again (its lease renewed). Agent: nothing.
  // backlog.fromPeerUnread: a deadline that passed meanwhile is judged at the
  // next tick, once per hint, so an answer that arrived in time but was not
  // read yet does not count as late; a peer that keeps bytes waiting gains
  // one tick, no more. backlog.toPeerUnread at the deadline: the hint had not
  // reached the guest, so it is awaited deliveryGrace longer (DeliveryLate),
  // once per hint, and then judged whatever the socket holds.
  // backlog.peerSideWaited at the deadline: the hint is awaited that much
  // longer (HostKeptPeerWaiting, said once per hint), in all at most
  // hostWaitGraceMax; the deadline moves as the measured wait grows.
  SessionOutput tick(SessionTime now, Backlog backlog = {});
  // Host: when a timer of tick() other than the lease renewal next falls due
  // (hello again, the ack deadline): the owner wakes then and calls
  // checkDeadlines, so neither waits for its next tick. None for an agent, a
  // closed session, or when nothing is pending (a judgement deferred for
  // unread bytes waits for the next tick, as tick() says).
  [[nodiscard]] std::optional<SessionTime> nextDeadline() const;
  // Host: when the oldest hint not yet acknowledged was sent (the start of
  // the wait the ack deadline bounds); none when nothing is awaited.
  [[nodiscard]] std::optional<SessionTime> awaitedSince() const;
  // tick() without the lease renewal: only what fell due is done.
  SessionOutput checkDeadlines(SessionTime now, Backlog backlog = {});

  // Host: the hint in force; sent at once when its vCPUs or policy changed,
  // else with the next tick. Its seq is the session's to give.
  SessionOutput setHint(std::optional<Hint> hint, SessionTime now);
  // Agent: what it says in hello changes (CPU hotplug); say it with sayHello().
  void setOwnHello(Hello ownHello);
  SessionOutput sayHello(SessionTime now);
  // Any message in the agreed version (agent: acks and status).
  SessionOutput send(const Message& message);
  // Agent: a refusal or failure told to the host, at most errorRepliesPerSecond.
  SessionOutput sendError(std::optional<std::uint64_t> seq, const std::string& reason, SessionTime now);

  [[nodiscard]] bool ready() const { return ready_; }  // a version is agreed on this connection
  [[nodiscard]] std::uint32_t version() const { return version_; }
  [[nodiscard]] const std::optional<Hello>& peerHello() const { return peerHello_; }
  [[nodiscard]] bool cooperative() const { return cooperative_; }  // host: a hint acknowledged, none overdue
  [[nodiscard]] const std::optional<Ack>& lastAck() const { return lastAck_; }
  [[nodiscard]] const SessionStats& stats() const { return stats_; }
  [[nodiscard]] Role role() const { return ownHello_.role; }

 private:
  void onFrame(const std::string& frame, SessionTime now, SessionOutput& out);
  void judgeDeadlines(SessionTime now, Backlog backlog, SessionOutput& out);
  // When the awaited hint is judged: ackTimeout after it was sent, plus
  // deliveryGrace when it had not reached the guest by then, plus the time
  // the host kept the guest's side waiting (hostWaitCredit_).
  [[nodiscard]] SessionTime ackDeadline() const;
  void onHelloFrom(const Hello& hello, SessionTime now, SessionOutput& out);
  void onAck(const Ack& ack, SessionTime now, SessionOutput& out);
  [[nodiscard]] std::optional<std::string> ackProblem(const Ack& ack, std::uint32_t hintVcpus) const;
  void refuse(const std::string& why, std::optional<std::uint64_t> seq, SessionTime now, SessionOutput& out);
  void sendHint(SessionTime now, SessionOutput& out);
  void sayHelloInto(SessionTime now, SessionOutput& out);
  void sendInto(const Message& message, SessionOutput& out, const std::string& prefix = {}, bool isHint = false);
  void sendErrorInto(std::optional<std::uint64_t> seq, const std::string& reason, SessionTime now, SessionOutput& out);

  Hello ownHello_;
  SessionLimits limits_;
  FrameDecoder decoder_;
  SessionStats stats_;
  bool isHost_;

  // This connection.
  bool open_ = false;
  bool ready_ = false;
  std::uint32_t version_;
  std::optional<Hello> peerHello_;
  bool overBudget_ = false;

  // Host.
  std::optional<Hint> hint_;
  std::uint64_t nextSeq_ = 1;                                 // across connections: a seq is never reused
  std::deque<std::pair<std::uint64_t, std::uint32_t>> sent_;  // seq and vCPUs of this connection's hints
  bool answerWithResync_ = false;                             // the next hint answers a hello: lead it with 0xFF
  SessionTime helloSentAt_{};
  std::optional<std::uint64_t> oldestUnackedSeq_;
  SessionTime oldestUnackedAt_{};
  bool overdue_ = false;
  std::optional<std::uint64_t> judgementDeferredFor_;  // the hint whose overdue judgement waited a tick
  std::optional<std::uint64_t> deliveryLateFor_;       // the hint found unread by the guest's side at its deadline
  std::optional<std::uint64_t> hostWaitCreditFor_;     // the hint hostWaitCredit_ belongs to
  std::chrono::milliseconds hostWaitCredit_{0};        // its deadline moved by the host's wait, capped
  bool cooperative_ = false;
  std::optional<Ack> lastAck_;
  SessionTime errorWindowStart_{};
  int errorsInWindow_ = 0;

  // Agent.
  SessionTime replyWindowStart_{};
  int repliesInWindow_ = 0;
  std::uint64_t repliesSuppressed_ = 0;
};

}  // namespace vcpufold::protocol
