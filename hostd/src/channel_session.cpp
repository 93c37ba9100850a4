#include "vcpufold/hostd/channel_session.h"

#include <algorithm>
#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <cmath>
#include <deque>

#include "vcpufold/common/log_text.h"
#include "vcpufold/common/log_throttle.h"
#include "vcpufold/protocol/codec.h"
#include "vcpufold/protocol/cpulist.h"
#include "vcpufold/protocol/frame_decoder.h"
#include "vcpufold/protocol/limits.h"
#include "vcpufold/protocol/version.h"

namespace vcpufold::hostd {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using Socket = asio::local::stream_protocol::socket;

constexpr std::size_t kMaxQueuedFrames = 16;
constexpr std::size_t kRememberedHints = 32;            // sent hints kept to check acks against
constexpr auto kHelloRepeat = std::chrono::seconds(2);  // hello again while no agent hello has come
constexpr const char* kSoftware = "vcpufold-hostd";

}  // namespace

const char* channelStateName(ChannelState state) {
  switch (state) {
    case ChannelState::Idle:
      return "idle";
    case ChannelState::Connecting:
      return "connecting";
    case ChannelState::WaitingForHello:
      return "waiting-for-hello";
    case ChannelState::Ready:
      return "ready";
    case ChannelState::Penalised:
      return "penalised";
  }
  return "?";
}

struct ChannelSession::Impl : std::enable_shared_from_this<Impl> {
  struct Outbound {
    std::string bytes;
    bool isHint = false;
  };

  Impl(asio::io_context& context, std::string vmName, std::string path, ChannelLimits channelLimits, Logger logger)
      : io(context),
        vm(std::move(vmName)),
        socketPath(std::move(path)),
        limits(channelLimits),
        log(std::move(logger)),
        socket(context),
        retryTimer(context),
        writeTimer(context),
        pauseTimer(context),
        backoff(channelLimits.reconnectMin),
        guestLog(channelLimits.logLinesPerWindow, channelLimits.logWindow) {}

  asio::io_context& io;
  std::string vm;
  std::string socketPath;
  ChannelLimits limits;
  Logger log;
  ChannelSession::StatusHandler statusHandler;
  ChannelSession::CooperationHandler cooperationHandler;
  Socket socket;
  asio::steady_timer retryTimer;
  asio::steady_timer writeTimer;
  asio::steady_timer pauseTimer;
  std::chrono::milliseconds backoff;
  std::uint64_t generation = 0;  // bumped on every close: stale handlers see a newer one and stop
  bool stopped = true;

  protocol::FrameDecoder decoder;
  std::array<char, 8192> readBuffer{};
  std::deque<Outbound> outbound;
  bool writing = false;

  std::optional<protocol::Hint> hint;
  std::deque<std::pair<std::uint64_t, std::uint32_t>> sentHints;  // seq and vCPUs, this connection only
  bool answerWithResync = false;                                  // the next hint answers a hello: lead it with 0xFF
  Clock::time_point helloSentAt{};
  std::uint64_t nextSeq = 1;
  std::uint64_t lastSentSeq = 0;
  std::optional<std::uint64_t> oldestUnackedSeq;
  Clock::time_point oldestUnackedAt;
  std::optional<Clock::time_point> uncooperativeSince;

  Clock::time_point rateWindowStart = Clock::now();
  std::size_t rateWindowBytes = 0;
  Clock::time_point errorWindowStart = Clock::now();
  int errorsInWindow = 0;

  ChannelSnapshot snap;
  LogThrottle guestLog;

  void say(const std::string& line) { log(escapeForLog(vm, 128) + ": " + line); }

  // A line the guest can cause at will: within the per-VM budget, else counted.
  void sayAboutGuest(const std::string& line) {
    if (!guestLog.allow(Clock::now())) {
      snap.logLinesSuppressed = guestLog.suppressedTotal();
      return;
    }
    const auto suppressed = guestLog.suppressedBefore();
    say(line + (suppressed ? " (" + std::to_string(suppressed) + " similar lines suppressed before this one)" : ""));
  }

  void connect() {
    if (stopped) return;
    snap.state = ChannelState::Connecting;
    socket = Socket(io);
    const auto mine = ++generation;
    socket.async_connect(asio::local::stream_protocol::endpoint(socketPath),
                         [self = shared_from_this(), mine](const boost::system::error_code& error) {
                           if (mine != self->generation || self->stopped) return;
                           if (error) {
                             self->retryLater(self->backoff, "connect " + self->socketPath + ": " + error.message());
                             return;
                           }
                           self->onConnected();
                         });
  }

  void onConnected() {
    ++snap.connects;
    snap.state = ChannelState::WaitingForHello;
    snap.agentHello.reset();
    // Nothing of an earlier connection is evidence about this one.
    snap.lastStatus.reset();
    snap.cooperative = false;
    oldestUnackedSeq.reset();
    uncooperativeSince.reset();
    sentHints.clear();
    // The first bytes may be the tail of a line from before (protocol.md section 3, step 1).
    decoder.reopen();
    outbound.clear();
    writing = false;
    say("connected to " + socketPath + "; saying hello");
    sayHello();
    readMore();
  }

  void sayHello() {
    protocol::Hello hello{protocol::Role::Host,
                          {std::begin(protocol::kSupportedVersions), std::end(protocol::kSupportedVersions)},
                          std::string(kSoftware) + " " + VCPUFOLD_VERSION,
                          std::nullopt};
    // 0xFF first: the agent drops whatever partial line it held from before.
    auto line = protocol::encodeMessage(hello, protocol::kHelloVersion);
    if (line) queue(std::string(1, protocol::kResyncByte) + *line, false);
    helloSentAt = Clock::now();
  }

  void retryLater(std::chrono::milliseconds delay, const std::string& why) {
    close();
    if (stopped) return;
    if (snap.state != ChannelState::Penalised) snap.state = ChannelState::Connecting;
    if (delay == backoff) {
      // Log the first failure of a run only; a VM without an agent would fill the log.
      if (backoff == limits.reconnectMin) say(why + "; retrying with backoff");
      backoff = std::min(backoff * 2, limits.reconnectMax);
    }
    const auto mine = generation;
    retryTimer.expires_after(delay);
    retryTimer.async_wait([self = shared_from_this(), mine](const boost::system::error_code& error) {
      if (error || mine != self->generation || self->stopped) return;
      self->connect();
    });
  }

  void close() {
    ++generation;
    boost::system::error_code ignored;
    socket.close(ignored);
    writeTimer.cancel();
    pauseTimer.cancel();
    writing = false;
    outbound.clear();
    snap.cooperative = false;
    snap.lastStatus.reset();
  }

  void readMore() {
    const auto now = Clock::now();
    if (now - rateWindowStart >= std::chrono::seconds(1)) {
      rateWindowStart = now;
      rateWindowBytes = 0;
    }
    const auto mine = generation;
    if (rateWindowBytes >= limits.readBytesPerSecond) {
      // Over the rate: read nothing until the window turns. The guest's writes
      // then block in its own kernel, not in hostd.
      pauseTimer.expires_at(rateWindowStart + std::chrono::seconds(1));
      pauseTimer.async_wait([self = shared_from_this(), mine](const boost::system::error_code& error) {
        if (!error && mine == self->generation) self->readMore();
      });
      return;
    }
    const std::size_t allowed = std::min(readBuffer.size(), limits.readBytesPerSecond - rateWindowBytes);
    socket.async_read_some(asio::buffer(readBuffer.data(), allowed),
                           [self = shared_from_this(), mine](const boost::system::error_code& error, std::size_t n) {
                             if (mine != self->generation || self->stopped) return;
                             if (error) {
                               self->retryLater(self->backoff, error == asio::error::eof ? "the channel closed"
                                                                                         : "read: " + error.message());
                               return;
                             }
                             self->onBytes(n);
                           });
  }

  void onBytes(std::size_t n) {
    snap.bytesIn += n;
    rateWindowBytes += n;
    const auto mine = generation;
    decoder.feed(std::string_view(readBuffer.data(), n));
    while (auto frame = decoder.next()) {
      if (frame->kind == protocol::Frame::Kind::Oversized)
        protocolError("a frame over " + std::to_string(protocol::kMaxFrameBytes) + " bytes");
      else
        onFrame(frame->text);
      if (mine != generation) return;  // over budget: the session closed
    }
    readMore();
  }

  void onFrame(const std::string& frame) {
    ++snap.framesIn;
    const auto decoded = protocol::decodeMessage(frame);
    if (!decoded) {
      protocolError(decoded.error().describe());
      return;
    }
    const auto& message = decoded.value().message;
    if (const auto* hello = std::get_if<protocol::Hello>(&message)) {
      onHello(*hello);
    } else if (const auto* ack = std::get_if<protocol::Ack>(&message)) {
      onAck(*ack);
    } else if (const auto* status = std::get_if<protocol::Status>(&message)) {
      if (!snap.lastStatus || std::abs(status->demand - snap.lastStatus->demand) >= 1.0)
        snap.lastDemandChangeAt = Clock::now();
      snap.lastStatus = *status;
      snap.lastStatusAt = Clock::now();
      if (statusHandler) statusHandler(*status);
    } else if (const auto* error = std::get_if<protocol::ErrorMessage>(&message)) {
      ++snap.agentErrors;
      snap.lastAgentError = error->reason;
      sayAboutGuest("agent reports an error" + (error->seq ? " about hint seq " + std::to_string(*error->seq) : "") +
                    ": " + escapeForLog(error->reason));
    } else {
      protocolError(std::string("a ") + protocol::messageTypeName(message) + " is not sent to a host");
    }
  }

  void onHello(const protocol::Hello& hello) {
    if (hello.role != protocol::Role::Agent || !hello.agent) {
      protocolError("hello.role: expected agent");
      return;
    }
    const std::vector<std::uint32_t> ours{std::begin(protocol::kSupportedVersions),
                                          std::end(protocol::kSupportedVersions)};
    const auto agreed = protocol::negotiateVersion(ours, hello.versions);
    if (!agreed) {
      queue(protocol::encodeMessage(protocol::ErrorMessage{std::nullopt, "no common protocol version"},
                                    protocol::kHelloVersion)
                .value(),
            false);
      protocolError("no common protocol version with " + hello.software);
      return;
    }
    const bool first = snap.state != ChannelState::Ready;
    snap.version = *agreed;
    snap.agentHello = hello;
    snap.state = ChannelState::Ready;
    backoff = limits.reconnectMin;
    // A hello proves nothing: cooperation starts with an acknowledged hint,
    // and a hint already overdue stays overdue (a guest that repeats hello
    // and never acknowledges is never cooperative).
    if (first)
      sayAboutGuest(escapeForLog(hello.software, 128) + " says hello: protocol " + std::to_string(snap.version) + ", " +
                    std::to_string(hello.agent->online.size()) + " online vCPUs, " +
                    std::to_string(hello.agent->threadsPerCore) + " per core");
    // Every agent hello is answered with the current hint. The agent discards
    // what it reads up to a newline or 0xFF after it reopens, so the answer
    // starts with 0xFF.
    answerWithResync = true;
    sendHint();
  }

  void onAck(const protocol::Ack& ack) {
    const auto sent =
        std::find_if(sentHints.begin(), sentHints.end(), [&ack](const auto& entry) { return entry.first == ack.seq; });
    if (snap.state != ChannelState::Ready || sent == sentHints.end()) {
      protocolError("ack of seq " + std::to_string(ack.seq) + ", not sent on this connection");
      return;
    }
    if (auto wrong = ackProblem(ack, sent->second)) {
      protocolError("ack of seq " + std::to_string(ack.seq) + ": " + *wrong);
      return;
    }
    snap.lastAck = ack;
    if (oldestUnackedSeq && ack.seq >= *oldestUnackedSeq) oldestUnackedSeq.reset();
    if (uncooperativeSince) say("the agent acknowledges again");
    uncooperativeSince.reset();
    const bool wasCooperative = snap.cooperative;
    snap.cooperative = snap.state == ChannelState::Ready;
    if (!wasCooperative && snap.cooperative && cooperationHandler) cooperationHandler();
  }

  // An acknowledgement must name CPUs the guest said it has online, and no
  // more of them than the hint allowed (rounded up to whole cores) unless the
  // agent only observes (actuator none).
  std::optional<std::string> ackProblem(const protocol::Ack& ack, std::uint32_t hintVcpus) const {
    const auto& agent = snap.agentHello->agent;
    if (!ack.applied.isSubsetOf(agent->online))
      return "applied CPUs " + protocol::formatCpuList(ack.applied - agent->online) + " are not online in the guest";
    const std::uint32_t threads = std::max<std::uint32_t>(agent->threadsPerCore, 1);
    const std::uint32_t allowed = (hintVcpus + threads - 1) / threads * threads;
    if (ack.actuator != protocol::Actuator::None && ack.applied.size() > allowed)
      return std::to_string(ack.applied.size()) + " CPUs applied for a hint of " + std::to_string(hintVcpus);
    if (ack.applied.empty()) return "no CPUs applied";
    return std::nullopt;
  }

  void protocolError(const std::string& why) {
    ++snap.protocolErrors;
    const auto now = Clock::now();
    if (now - errorWindowStart >= limits.errorWindow) {
      errorWindowStart = now;
      errorsInWindow = 0;
    }
    if (++errorsInWindow == 1) sayAboutGuest("protocol error: " + escapeForLog(why));
    if (errorsInWindow > limits.errorBudget) {
      ++snap.penalties;
      say("over the error budget (" + std::to_string(limits.errorBudget) + " in " +
          std::to_string(limits.errorWindow.count() / 1000) + " s): disconnecting for " +
          std::to_string(limits.penalty.count() / 1000) + " s");
      snap.state = ChannelState::Penalised;
      errorsInWindow = 0;
      retryLater(limits.penalty, "penalty");
    }
  }

  void sendHint() {
    if (snap.state != ChannelState::Ready || !hint) return;
    protocol::Hint next = *hint;
    next.seq = nextSeq++;
    auto line = protocol::encodeMessage(next, snap.version);
    if (!line) {
      say(line.error().message);
      return;
    }
    lastSentSeq = next.seq;
    sentHints.emplace_back(next.seq, next.vcpus);
    if (sentHints.size() > kRememberedHints) sentHints.pop_front();
    if (!oldestUnackedSeq) {
      oldestUnackedSeq = next.seq;
      oldestUnackedAt = Clock::now();
    }
    ++snap.hintsSent;
    if (std::exchange(answerWithResync, false)) line = std::string(1, protocol::kResyncByte) + *line;
    queue(*line, true);
  }

  void queue(std::string bytes, bool isHint) {
    if (isHint) {
      // Only the newest hint matters: an unsent older one is replaced.
      for (auto it = outbound.begin() + (writing ? 1 : 0); it != outbound.end(); ++it)
        if (it->isHint) {
          it->bytes = std::move(bytes);
          return;
        }
    }
    if (outbound.size() >= kMaxQueuedFrames) return;  // a guest that does not read loses frames, not memory
    outbound.push_back(Outbound{std::move(bytes), isHint});
    writeNext();
  }

  void writeNext() {
    if (writing || outbound.empty() || !socket.is_open()) return;
    writing = true;
    const auto mine = generation;
    writeTimer.expires_after(limits.writeTimeout);
    writeTimer.async_wait([self = shared_from_this(), mine](const boost::system::error_code& error) {
      if (error || mine != self->generation) return;
      self->retryLater(self->backoff, "a write did not complete in " +
                                          std::to_string(self->limits.writeTimeout.count()) +
                                          " ms (the guest is not reading)");
    });
    asio::async_write(socket, asio::buffer(outbound.front().bytes),
                      [self = shared_from_this(), mine](const boost::system::error_code& error, std::size_t) {
                        if (mine != self->generation) return;
                        self->writeTimer.cancel();
                        self->writing = false;
                        if (error) {
                          self->retryLater(self->backoff, "write: " + error.message());
                          return;
                        }
                        self->outbound.pop_front();
                        self->writeNext();
                      });
  }

  void onTick() {
    const auto now = Clock::now();
    // An agent's answer can be lost to the discard after connecting (an agent
    // that does not lead its hello with 0xFF, or a tail that swallowed it):
    // hello again until one arrives.
    if (snap.state == ChannelState::WaitingForHello && now - helloSentAt >= kHelloRepeat) sayHello();
    if (snap.state != ChannelState::Ready) return;
    if (oldestUnackedSeq && now - oldestUnackedAt > limits.ackTimeout && !uncooperativeSince) {
      uncooperativeSince = now;
      snap.cooperative = false;
      say("hint seq " + std::to_string(*oldestUnackedSeq) + " not acknowledged in " +
          std::to_string(limits.ackTimeout.count()) + " ms: not cooperative, counted at its demand");
    }
    // Hints keep going to a silent agent (hostd hints a VM that is not
    // cooperative all its vCPUs): an acknowledgement makes it cooperative again.
    sendHint();
  }
};

ChannelSession::ChannelSession(boost::asio::io_context& io, std::string vmName, std::string socketPath,
                               ChannelLimits limits, Logger log)
    : impl_(std::make_shared<Impl>(io, std::move(vmName), std::move(socketPath), limits, std::move(log))) {}

ChannelSession::~ChannelSession() { stop(); }

void ChannelSession::start() {
  if (!impl_->stopped) return;
  impl_->stopped = false;
  impl_->connect();
}

void ChannelSession::stop() {
  impl_->stopped = true;
  impl_->retryTimer.cancel();
  impl_->close();
  impl_->snap.state = ChannelState::Idle;
}

void ChannelSession::setHint(std::optional<protocol::Hint> hint) {
  const bool changed = hint.has_value() != impl_->hint.has_value() ||
                       (hint && (hint->vcpus != impl_->hint->vcpus || hint->policy != impl_->hint->policy));
  impl_->hint = std::move(hint);
  if (!impl_->hint) impl_->oldestUnackedSeq.reset();
  if (changed) impl_->sendHint();
}

void ChannelSession::tick() { impl_->onTick(); }

void ChannelSession::onStatus(StatusHandler handler) { impl_->statusHandler = std::move(handler); }
void ChannelSession::onCooperation(CooperationHandler handler) { impl_->cooperationHandler = std::move(handler); }

ChannelSnapshot ChannelSession::snapshot() const { return impl_->snap; }

const std::string& ChannelSession::socketPath() const { return impl_->socketPath; }

}  // namespace vcpufold::hostd
