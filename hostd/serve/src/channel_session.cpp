// SPDX-License-Identifier: GPL-2.0-or-later
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

#include <linux/sockios.h>
#include <sys/ioctl.h>

#include "vcpufold/common/log_text.h"
#include "vcpufold/common/log_throttle.h"
#include "vcpufold/hostd/version.h"
#include "vcpufold/protocol/session.h"
#include "vcpufold/protocol/version.h"

namespace vcpufold::hostd {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using Socket = asio::local::stream_protocol::socket;

constexpr std::size_t kMaxQueuedFrames = 16;
constexpr const char* kSoftware = "vcpufold-hostd";

}  // namespace

struct ChannelSession::Impl : std::enable_shared_from_this<Impl> {
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
        deadlineTimer(context),
        backoff(channelLimits.reconnectMin),
        session(hostHello(), channelLimits.session),
        guestLog(channelLimits.logLinesPerWindow, channelLimits.logWindow) {}

  static protocol::Hello hostHello() {
    return protocol::Hello{protocol::Role::Host,
                           {std::begin(protocol::kSupportedVersions), std::end(protocol::kSupportedVersions)},
                           std::string(kSoftware) + " " + kHostdVersion,
                           std::nullopt};
  }

  asio::io_context& io;
  std::string vm;
  std::string socketPath;
  ChannelLimits limits;
  Logger log;
  ChannelSession::StatusHandler statusHandler;
  ChannelSession::CooperationHandler cooperationHandler;
  ChannelSession::PeerCheck peerCheck;
  ChannelSession::PeerWaitProbe peerWaitProbe;
  ChannelSession::WaitReport waitReport;
  // The far end's run-queue wait when the awaited hint was sent, and which
  // wait (its start) that was: the base of Backlog::peerSideWaited.
  std::optional<protocol::SessionTime> waitBaseFor;
  std::optional<std::chrono::nanoseconds> waitBase;
  Socket socket;
  asio::steady_timer retryTimer;
  asio::steady_timer writeTimer;
  asio::steady_timer pauseTimer;
  // The session's next deadline (hello again, an ack overdue): judged when it
  // falls due, not at the next tick. armedDeadline: what the timer waits for.
  asio::steady_timer deadlineTimer;
  std::optional<Clock::time_point> armedDeadline;
  std::chrono::milliseconds backoff;
  std::uint64_t generation = 0;  // bumped on every close: stale handlers see a newer one and stop
  bool stopped = true;

  protocol::Session session;  // the protocol; this shell does the socket, timers and logs
  std::chrono::milliseconds tickLate{0};  // how late the control thread judged, for its log lines
  std::size_t bytesWaitingAtTick = 0;     // from the guest, not read by hostd yet
  std::size_t bytesUnreadByGuestAtTick = 0;  // to the guest, not taken by its side yet
  std::chrono::milliseconds peerWaitedAtTick{0};  // the far end's run-queue wait since the awaited hint was sent
  std::array<char, 8192> readBuffer{};
  std::deque<protocol::OutboundFrame> outbound;
  bool writing = false;

  Clock::time_point rateWindowStart = Clock::now();
  std::size_t rateWindowBytes = 0;

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
    if (peerCheck)
      if (auto refused = peerCheck(socket.native_handle())) {
        retryLater(backoff, socketPath + ": " + *refused + "; not talking to it");
        return;
      }
    ++snap.connects;
    snap.state = ChannelState::WaitingForHello;
    // Nothing of an earlier connection is evidence about this one.
    snap.lastStatus.reset();
    outbound.clear();
    writing = false;
    say("connected to " + socketPath + "; saying hello");
    handle(session.open(Clock::now()));
    readMore();
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
    deadlineTimer.cancel();
    armedDeadline.reset();
    writing = false;
    outbound.clear();
    session.close();
    snap.lastStatus.reset();
    refreshSnapshot();
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
    handle(session.feed(std::string_view(readBuffer.data(), n), Clock::now()));
    if (mine != generation) return;  // over budget: the session closed
    readMore();
  }

  // What the session asks for: frames written, events logged and acted on.
  void handle(protocol::SessionOutput out) {
    const auto mine = generation;
    for (auto& frame : out.frames) queue(std::move(frame));
    for (const auto& event : out.events) {
      onEvent(event);
      if (mine != generation) break;  // over budget: the session closed
    }
    if (mine == generation) noteWaitBase();
    refreshSnapshot();
    if (mine == generation) armDeadline();
  }

  // Every session call can move its deadline: the timer follows, re-armed
  // only when the deadline changed (statuses arrive many times a second).
  void armDeadline() {
    const auto due = session.nextDeadline();
    if (due == armedDeadline) return;
    armedDeadline = due;
    if (!due) {
      deadlineTimer.cancel();
      return;
    }
    deadlineTimer.expires_at(*due);
    deadlineTimer.async_wait([self = shared_from_this(), mine = generation](const boost::system::error_code& error) {
      if (error || mine != self->generation || self->stopped) return;
      self->armedDeadline.reset();
      const auto now = Clock::now();
      const auto late = std::chrono::duration_cast<std::chrono::milliseconds>(now - self->deadlineTimer.expiry());
      self->handle(self->session.checkDeadlines(now, self->measureBacklog(late)));
    });
  }

  // Bytes in flight either way, non-blocking, for the session's judgement
  // and the log line that reports it.
  protocol::Backlog measureBacklog(std::chrono::milliseconds late) {
    tickLate = late;
    bytesWaitingAtTick = 0;
    bytesUnreadByGuestAtTick = 0;
    if (socket.is_open()) {
      boost::system::error_code ignored;
      bytesWaitingAtTick = socket.available(ignored);
      // AF_UNIX SIOCOUTQ: what we wrote that the peer (QEMU's chardev) has
      // not read yet; plus frames still queued in this process.
      int unread = 0;
      if (::ioctl(socket.native_handle(), SIOCOUTQ, &unread) == 0 && unread > 0)
        bytesUnreadByGuestAtTick = static_cast<std::size_t>(unread);
    }
    for (const auto& frame : outbound) bytesUnreadByGuestAtTick += frame.bytes.size();
    return protocol::Backlog{bytesWaitingAtTick > 0, bytesUnreadByGuestAtTick > 0, peerWaitedSinceAwaited()};
  }

  // A new wait began (a hint sent with none awaited): note the far end's
  // run-queue wait now, to measure how much of the wait the host used.
  void noteWaitBase() {
    const auto since = session.awaitedSince();
    if (since == waitBaseFor) return;
    waitBaseFor = since;
    waitBase.reset();
    if (since && peerWaitProbe && socket.is_open()) waitBase = peerWaitProbe(socket.native_handle());
  }

  std::chrono::milliseconds peerWaitedSinceAwaited() {
    peerWaitedAtTick = std::chrono::milliseconds(0);
    if (!waitBase || waitBaseFor != session.awaitedSince() || !peerWaitProbe || !socket.is_open())
      return peerWaitedAtTick;
    const auto now = peerWaitProbe(socket.native_handle());
    // A counter that went back is another process (QEMU restarted): no credit.
    if (now && *now > *waitBase)
      peerWaitedAtTick = std::chrono::duration_cast<std::chrono::milliseconds>(*now - *waitBase);
    return peerWaitedAtTick;
  }

  void onEvent(const protocol::SessionEvent& event) {
    using Kind = protocol::SessionEvent::Kind;
    switch (event.kind) {
      case Kind::PeerHello: {
        snap.state = ChannelState::Ready;
        backoff = limits.reconnectMin;
        const auto& hello = std::get<protocol::Hello>(*event.message);
        if (event.first)
          sayAboutGuest(escapeForLog(hello.software, 128) + " says hello: protocol " +
                        std::to_string(session.version()) + ", " + std::to_string(hello.agent->online.size()) +
                        " online vCPUs, " + std::to_string(hello.agent->threadsPerCore) + " per core");
        break;
      }
      case Kind::Status: {
        const auto& status = std::get<protocol::Status>(*event.message);
        const auto now = Clock::now();
        if (!snap.lastStatus || std::abs(status.demand - snap.lastStatus->demand) >= 1.0) snap.lastDemandChangeAt = now;
        snap.lastStatus = status;
        snap.lastStatusAt = now;
        if (statusHandler) statusHandler(status);
        break;
      }
      case Kind::PeerError: {
        const auto& error = std::get<protocol::ErrorMessage>(*event.message);
        snap.lastAgentError = error.reason;
        sayAboutGuest("agent reports an error" + (error.seq ? " about hint seq " + std::to_string(*error.seq) : "") +
                      ": " + escapeForLog(error.reason));
        break;
      }
      case Kind::ProtocolError:
        if (event.first) sayAboutGuest("protocol error: " + escapeForLog(event.text));
        break;
      case Kind::OverErrorBudget:
        ++snap.penalties;
        say(event.text + ": disconnecting for " + std::to_string(limits.penalty.count() / 1000) + " s");
        snap.state = ChannelState::Penalised;
        retryLater(limits.penalty, "penalty");
        break;
      case Kind::AckOverdue: {
        // Which side was late: bytes left unread and a late tick point at
        // this host; the vCPUs' waits at this host too, vCPUs that neither
        // ran nor waited at a guest that did not wake its agent.
        std::string vcpus;
        if (const auto since = session.awaitedSince() ? session.awaitedSince() : waitBaseFor; since && waitReport)
          if (auto report = waitReport(*since)) vcpus = "; " + *report;
        sayAboutGuest(event.text + ": not cooperative, counted at its demand (" + std::to_string(bytesWaitingAtTick) +
                      " bytes from the guest unread, " + std::to_string(bytesUnreadByGuestAtTick) +
                      " bytes to the guest not yet taken by its side, its main loop kept waiting " +
                      std::to_string(peerWaitedAtTick.count()) + " ms, judged " + std::to_string(tickLate.count()) +
                      " ms behind schedule" + vcpus + ")");
        break;
      }
      case Kind::DeliveryLate:
        // The guest's side (QEMU's chardev, the guest's virtio queue) stalled, not its agent.
        sayAboutGuest(event.text + " (" + std::to_string(bytesUnreadByGuestAtTick) +
                      " bytes to the guest not taken by its side)");
        break;
      case Kind::HostKeptPeerWaiting:
        // This host starved the VM's main loop; the agent is not judged for that time.
        sayAboutGuest(event.text + " (QEMU's main loop runnable but not run)");
        break;
      case Kind::AcknowledgesAgain:
        sayAboutGuest("the agent acknowledges again");
        break;
      case Kind::Cooperative:
        refreshSnapshot();  // the handler may read the snapshot
        if (cooperationHandler) cooperationHandler();
        break;
      case Kind::EncodeFailed:
        say(event.text);
        break;
      case Kind::VersionMismatch:
        // The session dropped what an earlier hello agreed: no hints until one agrees again.
        if (snap.state == ChannelState::Ready) snap.state = ChannelState::WaitingForHello;
        sayAboutGuest(escapeForLog(event.text, 128) + " shares no protocol version with hostd: not hinted until a hello agrees");
        break;
      case Kind::PeerReset:
      case Kind::Ack:
      case Kind::Hint:
      case Kind::RepliesSuppressed:
        break;  // counted by the session; the snapshot shows them
    }
  }

  // The session's view of this connection, copied where status and metrics read it.
  void refreshSnapshot() {
    snap.version = session.ready() ? session.version() : 0;
    snap.agentHello = session.peerHello();
    snap.cooperative = session.cooperative();
    snap.lastAck = session.lastAck();
    const auto& stats = session.stats();
    snap.framesIn = stats.framesIn;
    snap.protocolErrors = stats.protocolErrors;
    snap.hintsSent = stats.hintsSent;
    snap.agentErrors = stats.peerErrors;
  }

  void queue(protocol::OutboundFrame frame) {
    if (frame.isHint) {
      // Only the newest hint matters: an unsent older one is replaced.
      for (auto it = outbound.begin() + (writing ? 1 : 0); it != outbound.end(); ++it)
        if (it->isHint) {
          it->bytes = std::move(frame.bytes);
          return;
        }
    }
    if (outbound.size() >= kMaxQueuedFrames) return;  // a guest that does not read loses frames, not memory
    outbound.push_back(std::move(frame));
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
  impl_->handle(impl_->session.setHint(std::move(hint), Clock::now()));
}

void ChannelSession::tick(std::chrono::milliseconds late) {
  if (impl_->stopped) return;
  // Bytes the guest sent that this loop has not read yet: an acknowledgement
  // among them was not late, this loop was. Bytes of ours the guest's side
  // has not taken: the agent has not seen the hint yet.
  const auto backlog = impl_->measureBacklog(late);
  impl_->handle(impl_->session.tick(Clock::now(), backlog));
}

void ChannelSession::onStatus(StatusHandler handler) { impl_->statusHandler = std::move(handler); }
void ChannelSession::onCooperation(CooperationHandler handler) { impl_->cooperationHandler = std::move(handler); }

void ChannelSession::checkPeer(PeerCheck check) { impl_->peerCheck = std::move(check); }
void ChannelSession::measurePeerWait(PeerWaitProbe probe) { impl_->peerWaitProbe = std::move(probe); }
void ChannelSession::reportWaitWith(WaitReport report) { impl_->waitReport = std::move(report); }

ChannelSnapshot ChannelSession::snapshot() const { return impl_->snap; }

const std::string& ChannelSession::socketPath() const { return impl_->socketPath; }

}  // namespace vcpufold::hostd
