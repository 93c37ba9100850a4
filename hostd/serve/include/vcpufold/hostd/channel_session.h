// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// ChannelSession: hostd's end of one VM's vcpufold channel (the UNIX socket of
// its org.vcpufold.hint.0 port): a Boost.Asio shell around protocol::Session,
// which holds the protocol itself (hello and negotiation, hints and their
// seq, ack checks and cooperation, the error budget; see session.h). This
// shell does what needs the socket and the clock, everything on the caller's
// single-threaded io_context:
//   connect, and reconnect with backoff; a penalty period when the session
//   is over its error budget;
//   a per-VM read rate limit; one write in flight with a timeout, at most 16
//   frames queued, the latest hint replacing any unsent one;
//   the agent's status reports kept with their arrival time, each handed to
//   the owner's status handler (a changed demand may call for a decision);
//   a per-VM budget of log lines, every guest string escaped.
// Nothing a guest does can block the io_context or another VM.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "vcpufold/hostd/channel_snapshot.h"
#include "vcpufold/protocol/messages.h"
#include "vcpufold/protocol/session.h"

namespace boost::asio {
class io_context;
}

namespace vcpufold::hostd {

struct ChannelLimits {
  std::chrono::milliseconds reconnectMin{250};
  std::chrono::milliseconds reconnectMax{30'000};
  std::chrono::milliseconds writeTimeout{2'000};
  std::size_t readBytesPerSecond = 64 * 1024;  // more is read a second later
  std::chrono::milliseconds penalty{30'000};   // disconnected this long when over the session's error budget
  std::uint32_t logLinesPerWindow = 5;         // guest-caused log lines per logWindow; the rest are counted
  std::chrono::milliseconds logWindow{10'000};
  // The protocol session's own: the ack deadline (not cooperative past it),
  // the error budget and its window, how often hello is repeated.
  protocol::SessionLimits session;
};

class ChannelSession {
 public:
  using Logger = std::function<void(const std::string& line)>;

  ChannelSession(boost::asio::io_context& io, std::string vmName, std::string socketPath, ChannelLimits limits,
                 Logger log);
  ~ChannelSession();
  ChannelSession(const ChannelSession&) = delete;
  ChannelSession& operator=(const ChannelSession&) = delete;

  void start();
  void stop();
  // The hint in force for this VM: sent now if possible and on every tick.
  // seq is assigned here. nullopt: stop hinting (the lease then runs out).
  void setHint(std::optional<protocol::Hint> hint);
  // Called once per tick: re-sends the hint (lease renewal), updates cooperation.
  // late: how far behind its schedule the control thread runs this tick (said
  // with an overdue acknowledgement, to tell a late host from a late guest).
  void tick(std::chrono::milliseconds late = std::chrono::milliseconds(0));
  // Runs on the io_context after every status the agent sends (the snapshot
  // already has it). It must not block; it may schedule work.
  using StatusHandler = std::function<void(const protocol::Status&)>;
  void onStatus(StatusHandler handler);
  // Runs on the io_context when the agent becomes cooperative: its first
  // valid acknowledgement on a connection, or one after it had stopped
  // acknowledging. Same rules as onStatus.
  using CooperationHandler = std::function<void()>;
  void onCooperation(CooperationHandler handler);

  // Asked at every connect, before a byte is exchanged, with the connected
  // socket: why the peer is not this VM's (the connection is then closed and
  // tried again with backoff), or none. Set before start().
  using PeerCheck = std::function<std::optional<std::string>(int fd)>;
  void checkPeer(PeerCheck check);

  // The host scheduler's run-queue wait so far (cumulative) of the thread on
  // the channel's far end that carries hints: QEMU's main loop. Read when a
  // hint starts being awaited and again at its ack deadline; the difference
  // is time the host, not the agent, used, and the deadline moves by it (up
  // to SessionLimits::hostWaitGraceMax). None: not known (no credit). Set
  // before start(); it must not block (a /proc read).
  using PeerWaitProbe = std::function<std::optional<std::chrono::nanoseconds>(int fd)>;
  void measurePeerWait(PeerWaitProbe probe);

  // Said with an overdue acknowledgement: what the VM's vCPUs did while the
  // hint was awaited (vcpu_time_report.h), given when the wait began; none
  // when not known. Set before start(); it must not block.
  using WaitReport = std::function<std::optional<std::string>(std::chrono::steady_clock::time_point awaitedSince)>;
  void reportWaitWith(WaitReport report);

  [[nodiscard]] ChannelSnapshot snapshot() const;
  [[nodiscard]] const std::string& socketPath() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace vcpufold::hostd
