// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/protocol/session.h"

#include <algorithm>

#include "vcpufold/protocol/codec.h"
#include "vcpufold/protocol/cpulist.h"
#include "vcpufold/protocol/limits.h"
#include "vcpufold/protocol/version.h"

namespace vcpufold::protocol {
namespace {

// An error frame's reason is cut to this: a refusal quotes the peer's input,
// and the answer must stay far below the frame limit.
constexpr std::size_t kMaxErrorReason = 256;

SessionEvent event(SessionEvent::Kind kind, std::string text = {}) {
  SessionEvent made{kind, std::move(text), std::nullopt, false, 0};
  return made;
}

}  // namespace

Session::Session(Hello ownHello, SessionLimits limits)
    : ownHello_(std::move(ownHello)),
      limits_(limits),
      isHost_(ownHello_.role == Role::Host),
      version_(kProtocolVersion) {}

SessionOutput Session::open(SessionTime now) {
  close();
  open_ = true;
  // The first bytes may be the tail of a line from before (protocol.md section 3, step 1).
  decoder_.reopen();
  SessionOutput out;
  sayHelloInto(now, out);
  return out;
}

void Session::close() {
  open_ = false;
  ready_ = false;
  version_ = kProtocolVersion;
  peerHello_.reset();
  overBudget_ = false;
  cooperative_ = false;
  overdue_ = false;
  oldestUnackedSeq_.reset();
  sent_.clear();
  answerWithResync_ = false;
}

SessionOutput Session::feed(std::string_view bytes, SessionTime now) {
  SessionOutput out;
  const std::uint64_t resetsBefore = decoder_.stats().resets;
  decoder_.feed(bytes);
  while (!overBudget_) {
    auto frame = decoder_.next();
    if (!frame) break;
    if (frame->kind == Frame::Kind::Oversized)
      refuse("a frame longer than " + std::to_string(kMaxFrameBytes) + " bytes, dropped", std::nullopt, now, out);
    else
      onFrame(frame->text, now, out);
  }
  // Every hello is led by one; more mean the peer gave up on lines it had begun.
  if (const std::uint64_t resets = decoder_.stats().resets - resetsBefore; resets > 0) {
    SessionEvent reset = event(SessionEvent::Kind::PeerReset);
    reset.count = resets;
    out.events.push_back(std::move(reset));
  }
  return out;
}

void Session::onFrame(const std::string& frame, SessionTime now, SessionOutput& out) {
  ++stats_.framesIn;
  const auto decoded = decodeMessage(frame);
  if (!decoded) {
    const auto& error = decoded.error();
    if (!isHost_ && error.type == "error") {
      // Never answer an error with an error: two ends refusing each other's
      // refusals would never stop.
      ++stats_.protocolErrors;
      out.events.push_back(event(SessionEvent::Kind::ProtocolError, error.describe()));
      return;
    }
    refuse(error.describe(), error.seq, now, out);
    return;
  }
  const Message& message = decoded.value().message;
  if (const auto* hello = std::get_if<Hello>(&message)) {
    onHelloFrom(*hello, now, out);
  } else if (const auto* error = std::get_if<ErrorMessage>(&message)) {
    ++stats_.peerErrors;
    SessionEvent peerError = event(SessionEvent::Kind::PeerError, error->reason);
    peerError.message = message;
    out.events.push_back(std::move(peerError));
  } else if (isHost_ && std::holds_alternative<Ack>(message)) {
    onAck(std::get<Ack>(message), now, out);
  } else if (isHost_ && std::holds_alternative<Status>(message)) {
    SessionEvent status = event(SessionEvent::Kind::Status);
    status.message = message;
    out.events.push_back(std::move(status));
  } else if (!isHost_ && std::holds_alternative<Hint>(message)) {
    SessionEvent hint = event(SessionEvent::Kind::Hint);
    hint.message = message;
    out.events.push_back(std::move(hint));
  } else {
    refuse(isHost_ ? std::string("a ") + messageTypeName(message) + " is not sent to a host"
                   : std::string("type: ") + messageTypeName(message) + " is not sent to an agent",
           std::nullopt, now, out);
  }
}

void Session::onHelloFrom(const Hello& hello, SessionTime now, SessionOutput& out) {
  if (isHost_ && (hello.role != Role::Agent || !hello.agent)) {
    refuse("hello.role: expected agent", std::nullopt, now, out);
    return;
  }
  if (!isHost_ && hello.role != Role::Host) {
    refuse("hello.role: the agent talks to a host", std::nullopt, now, out);
    return;
  }
  const auto agreed = negotiateVersion(ownHello_.versions, hello.versions);
  if (!agreed) {
    // What an earlier hello agreed no longer holds: no hint goes out, and
    // nothing of the old agreement (version, the peer's CPUs, cooperation)
    // counts, until a hello agrees again.
    ready_ = false;
    version_ = kProtocolVersion;
    peerHello_.reset();
    cooperative_ = false;
    overdue_ = false;
    oldestUnackedSeq_.reset();
    sent_.clear();
    out.events.push_back(event(SessionEvent::Kind::VersionMismatch, hello.software));
    if (isHost_) {
      // Told once per hello, and counted against the budget: a guest cannot
      // make the host answer without end.
      sendInto(ErrorMessage{std::nullopt, "no common protocol version"}, out);
      refuse("no common protocol version with " + hello.software, std::nullopt, now, out);
    } else {
      sendErrorInto(std::nullopt, "no common protocol version", now, out);
    }
    return;
  }
  const bool first = !ready_;
  version_ = *agreed;
  peerHello_ = hello;
  ready_ = true;
  SessionEvent said = event(SessionEvent::Kind::PeerHello, hello.software);
  said.message = hello;
  said.first = first;
  out.events.push_back(std::move(said));
  if (isHost_) {
    // A hello proves nothing: cooperation starts with an acknowledged hint,
    // and a hint already overdue stays overdue. Every agent hello is answered
    // with the current hint; the agent discards what it reads up to a newline
    // or 0xFF after it reopens, so the answer starts with 0xFF.
    answerWithResync_ = true;
    sendHint(now, out);
  } else {
    // The host may have reopened without the agent noticing: every host hello is answered.
    sayHelloInto(now, out);
  }
}

void Session::onAck(const Ack& ack, SessionTime now, SessionOutput& out) {
  const auto sent =
      std::find_if(sent_.begin(), sent_.end(), [&ack](const auto& entry) { return entry.first == ack.seq; });
  if (!ready_ || sent == sent_.end()) {
    refuse("ack of seq " + std::to_string(ack.seq) + ", not sent on this connection", std::nullopt, now, out);
    return;
  }
  if (auto wrong = ackProblem(ack, sent->second)) {
    refuse("ack of seq " + std::to_string(ack.seq) + ": " + *wrong, std::nullopt, now, out);
    return;
  }
  lastAck_ = ack;
  // An answer to a hint sent before the one still awaited says the agent was
  // keeping up then, not now (a starved agent works through its backlog): it
  // neither ends the wait nor an overdue agent's loss of cooperation, which
  // would fold the VM again on stale evidence and unfold it at the next tick.
  const bool stale = oldestUnackedSeq_ && ack.seq < *oldestUnackedSeq_;
  if (!stale) oldestUnackedSeq_.reset();
  if (!stale && std::exchange(overdue_, false)) out.events.push_back(event(SessionEvent::Kind::AcknowledgesAgain));
  SessionEvent acked = event(SessionEvent::Kind::Ack);
  acked.message = ack;
  out.events.push_back(std::move(acked));
  if (!stale && !std::exchange(cooperative_, true)) out.events.push_back(event(SessionEvent::Kind::Cooperative));
}

// An acknowledgement must name CPUs the guest said it has online, and no more
// of them than the hint allowed (rounded up to whole cores) unless the agent
// only observes (actuator none).
std::optional<std::string> Session::ackProblem(const Ack& ack, std::uint32_t hintVcpus) const {
  const auto& agent = peerHello_->agent;
  if (!ack.applied.isSubsetOf(agent->online))
    return "applied CPUs " + formatCpuList(ack.applied - agent->online) + " are not online in the guest";
  const std::uint32_t threads = std::max<std::uint32_t>(agent->threadsPerCore, 1);
  const std::uint32_t allowed = (hintVcpus + threads - 1) / threads * threads;
  if (ack.actuator != Actuator::None && ack.applied.size() > allowed)
    return std::to_string(ack.applied.size()) + " CPUs applied for a hint of " + std::to_string(hintVcpus);
  if (ack.applied.empty()) return "no CPUs applied";
  return std::nullopt;
}

void Session::refuse(const std::string& why, std::optional<std::uint64_t> seq, SessionTime now, SessionOutput& out) {
  ++stats_.protocolErrors;
  SessionEvent refused = event(SessionEvent::Kind::ProtocolError, why);
  if (!isHost_) {
    out.events.push_back(std::move(refused));
    sendErrorInto(seq, why, now, out);
    return;
  }
  // The host answers a guest's bad frames with nothing but a budget: over it,
  // the owner disconnects for a penalty period.
  if (now - errorWindowStart_ >= limits_.errorWindow) {
    errorWindowStart_ = now;
    errorsInWindow_ = 0;
  }
  refused.first = ++errorsInWindow_ == 1;
  out.events.push_back(std::move(refused));
  if (errorsInWindow_ > limits_.errorBudget) {
    overBudget_ = true;
    errorsInWindow_ = 0;
    out.events.push_back(event(SessionEvent::Kind::OverErrorBudget,
                               "over the error budget (" + std::to_string(limits_.errorBudget) + " in " +
                                   std::to_string(limits_.errorWindow.count() / 1000) + " s)"));
  }
}

SessionOutput Session::tick(SessionTime now, Backlog backlog) {
  SessionOutput out;
  if (!isHost_ || !open_) return out;
  judgeDeadlines(now, backlog, out);
  // Hints keep going to a silent agent (hostd hints a VM that is not
  // cooperative all its vCPUs): an acknowledgement makes it cooperative again.
  sendHint(now, out);
  return out;
}

SessionOutput Session::checkDeadlines(SessionTime now, Backlog backlog) {
  SessionOutput out;
  if (isHost_ && open_) judgeDeadlines(now, backlog, out);
  return out;
}

SessionTime Session::ackDeadline() const {
  const bool deliveryLate = deliveryLateFor_ && deliveryLateFor_ == oldestUnackedSeq_;
  const bool hostWaited = hostWaitCreditFor_ && hostWaitCreditFor_ == oldestUnackedSeq_;
  return oldestUnackedAt_ + limits_.ackTimeout + (deliveryLate ? limits_.deliveryGrace : SessionTime::duration{}) +
         (hostWaited ? hostWaitCredit_ : SessionTime::duration{});
}

std::optional<SessionTime> Session::awaitedSince() const {
  if (!isHost_ || !open_ || !oldestUnackedSeq_) return std::nullopt;
  return oldestUnackedAt_;
}

std::optional<SessionTime> Session::nextDeadline() const {
  if (!isHost_ || !open_) return std::nullopt;
  if (!ready_) return helloSentAt_ + limits_.helloRepeat;
  // Just past the deadline: an answer at the deadline itself is in time.
  if (oldestUnackedSeq_ && !overdue_ && judgementDeferredFor_ != oldestUnackedSeq_)
    return ackDeadline() + std::chrono::milliseconds(1);
  return std::nullopt;
}

void Session::judgeDeadlines(SessionTime now, Backlog backlog, SessionOutput& out) {
  // An agent's answer can be lost to the discard after opening (an agent that
  // does not lead its hello with 0xFF, or a tail that swallowed it): hello
  // again until one arrives.
  if (!ready_) {
    if (now - helloSentAt_ >= limits_.helloRepeat) sayHelloInto(now, out);
    return;
  }
  if (!oldestUnackedSeq_ || overdue_ || now <= ackDeadline()) return;
  if (backlog.toPeerUnread && deliveryLateFor_ != oldestUnackedSeq_ && limits_.deliveryGrace.count() > 0) {
    // The hint (or one after it) still sits in our socket: the guest has not
    // seen it, and an agent cannot answer what it never got. Once per hint,
    // so a guest that never reads gains deliveryGrace, no more.
    deliveryLateFor_ = oldestUnackedSeq_;
    out.events.push_back(event(SessionEvent::Kind::DeliveryLate,
                               "hint seq " + std::to_string(*oldestUnackedSeq_) + " not yet read by the guest's side in " +
                                   std::to_string(limits_.ackTimeout.count()) + " ms: awaited " +
                                   std::to_string(limits_.deliveryGrace.count()) + " ms longer"));
    return;
  }
  // The host did not run the guest's side for part of the wait: the agent
  // could not have answered in that time. The credit only grows (the wait is
  // cumulative) and is capped, so a VM the host starves gains
  // hostWaitGraceMax at most, once per hint.
  const auto measured = backlog.peerSideWaited;
  const auto hostWait = std::min(measured, limits_.hostWaitGraceMax);
  const bool creditIsThisHint = hostWaitCreditFor_ == oldestUnackedSeq_;
  if (hostWait > (creditIsThisHint ? hostWaitCredit_ : std::chrono::milliseconds(0))) {
    const bool first = !creditIsThisHint;
    hostWaitCreditFor_ = oldestUnackedSeq_;
    hostWaitCredit_ = hostWait;
    if (now <= ackDeadline()) {
      if (first)
        out.events.push_back(event(SessionEvent::Kind::HostKeptPeerWaiting,
                                   "hint seq " + std::to_string(*oldestUnackedSeq_) +
                                       ": the host kept the guest's side waiting to run " +
                                       std::to_string(measured.count()) + " ms since it was sent: awaited " +
                                       std::to_string(hostWait.count()) + " ms longer"));
      return;
    }
  }
  if (backlog.fromPeerUnread && judgementDeferredFor_ != oldestUnackedSeq_) {
    judgementDeferredFor_ = oldestUnackedSeq_;  // read what came first; the next tick judges
    return;
  }
  overdue_ = true;
  cooperative_ = false;
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(ackDeadline() - oldestUnackedAt_);
  out.events.push_back(event(SessionEvent::Kind::AckOverdue, "hint seq " + std::to_string(*oldestUnackedSeq_) +
                                                                 " not acknowledged in " +
                                                                 std::to_string(waited.count()) + " ms"));
}

SessionOutput Session::setHint(std::optional<Hint> hint, SessionTime now) {
  SessionOutput out;
  const bool changed =
      hint.has_value() != hint_.has_value() || (hint && (hint->vcpus != hint_->vcpus || hint->policy != hint_->policy));
  hint_ = std::move(hint);
  if (!hint_) oldestUnackedSeq_.reset();
  if (changed) sendHint(now, out);
  return out;
}

void Session::sendHint(SessionTime now, SessionOutput& out) {
  if (!ready_ || !hint_) return;
  Hint next = *hint_;
  next.seq = nextSeq_;
  auto line = encodeMessage(next, version_);
  if (!line) {
    out.events.push_back(event(SessionEvent::Kind::EncodeFailed, line.error().message));
    return;
  }
  ++nextSeq_;
  sent_.emplace_back(next.seq, next.vcpus);
  if (sent_.size() > limits_.rememberedHints) sent_.pop_front();
  if (!oldestUnackedSeq_) {
    oldestUnackedSeq_ = next.seq;
    oldestUnackedAt_ = now;
  }
  ++stats_.hintsSent;
  const std::string prefix = std::exchange(answerWithResync_, false) ? std::string(1, kResyncByte) : std::string();
  out.frames.push_back(OutboundFrame{prefix + *line, true});
}

void Session::setOwnHello(Hello ownHello) { ownHello_ = std::move(ownHello); }

SessionOutput Session::sayHello(SessionTime now) {
  SessionOutput out;
  sayHelloInto(now, out);
  return out;
}

void Session::sayHelloInto(SessionTime now, SessionOutput& out) {
  // 0xFF first: the peer drops whatever partial line it held from before.
  sendInto(ownHello_, out, std::string(1, kResyncByte));
  helloSentAt_ = now;
}

SessionOutput Session::send(const Message& message) {
  SessionOutput out;
  sendInto(message, out);
  return out;
}

void Session::sendInto(const Message& message, SessionOutput& out, const std::string& prefix, bool isHint) {
  auto line = encodeMessage(message, version_);
  if (!line) {
    out.events.push_back(event(SessionEvent::Kind::EncodeFailed, line.error().message));
    return;
  }
  out.frames.push_back(OutboundFrame{prefix + *line, isHint});
}

SessionOutput Session::sendError(std::optional<std::uint64_t> seq, const std::string& reason, SessionTime now) {
  SessionOutput out;
  sendErrorInto(seq, reason, now, out);
  return out;
}

void Session::sendErrorInto(std::optional<std::uint64_t> seq, const std::string& reason, SessionTime now,
                            SessionOutput& out) {
  if (now - replyWindowStart_ >= std::chrono::seconds(1)) {
    if (repliesSuppressed_ > 0) {
      SessionEvent suppressed = event(SessionEvent::Kind::RepliesSuppressed);
      suppressed.count = std::exchange(repliesSuppressed_, 0);
      out.events.push_back(std::move(suppressed));
    }
    replyWindowStart_ = now;
    repliesInWindow_ = 0;
  }
  if (++repliesInWindow_ > limits_.errorRepliesPerSecond) {
    ++repliesSuppressed_;
    return;
  }
  sendInto(ErrorMessage{seq, reason.substr(0, kMaxErrorReason)}, out);
}

}  // namespace vcpufold::protocol
