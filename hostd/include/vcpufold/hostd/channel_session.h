#pragma once
// ChannelSession: hostd's end of one VM's vcpufold channel (the UNIX socket of
// its org.vcpufold.hint.0 port). Boost.Asio, everything on the caller's
// single-threaded io_context:
//   connect, and reconnect with backoff; 0xFF + hello on every connect;
//   version negotiation on the agent's hello, answered with the current hint;
//   the current hint re-sent every tick (the lease renewal);
//   acks tracked: only an acknowledgement of a hint sent on this connection,
//   naming CPUs the guest has online and no more than the hint allowed, makes
//   the VM cooperative; a hello does not, and an agent that stops
//   acknowledging is not cooperative;
//   status intake (demand, steal), forgotten on disconnect, each one handed
//   to the owner's status handler (a changed demand may call for a decision).
// Guest bytes are hostile: a bounded decoder, a per-VM read rate limit, an
// error budget (over it: disconnect for a backoff period, logged once), a
// per-VM budget of log lines with every guest string escaped,
// one write in flight with a timeout, and the latest hint replacing any
// unsent one. Nothing a guest does can block the io_context or another VM.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "vcpufold/protocol/messages.h"

namespace boost::asio {
class io_context;
}

namespace vcpufold::hostd {

struct ChannelLimits {
  std::chrono::milliseconds reconnectMin{250};
  std::chrono::milliseconds reconnectMax{30'000};
  std::chrono::milliseconds writeTimeout{2'000};
  std::chrono::milliseconds ackTimeout{3'000};  // an unacknowledged hint this old: not cooperative
  std::size_t readBytesPerSecond = 64 * 1024;   // more is read a second later
  int errorBudget = 20;                         // protocol errors per errorWindow
  std::chrono::milliseconds errorWindow{10'000};
  std::chrono::milliseconds penalty{30'000};  // disconnected this long when over budget
  std::uint32_t logLinesPerWindow = 5;        // guest-caused log lines per logWindow; the rest are counted
  std::chrono::milliseconds logWindow{10'000};
};

enum class ChannelState { Idle, Connecting, WaitingForHello, Ready, Penalised };
const char* channelStateName(ChannelState state);

// What the session knows, for allocation, status and metrics.
struct ChannelSnapshot {
  ChannelState state = ChannelState::Idle;
  std::uint32_t version = 0;
  std::optional<protocol::Hello> agentHello;
  std::optional<protocol::Status> lastStatus;            // none until the agent reports on this connection
  std::chrono::steady_clock::time_point lastStatusAt{};  // when lastStatus arrived
  // When the reported demand last moved by a task or more (or was first reported) on this connection.
  std::chrono::steady_clock::time_point lastDemandChangeAt{};
  std::optional<protocol::Ack> lastAck;
  std::optional<std::string> lastAgentError;
  bool cooperative = false;  // ready, and a hint of this connection acknowledged, none overdue
  std::uint64_t framesIn = 0;
  std::uint64_t bytesIn = 0;
  std::uint64_t protocolErrors = 0;
  std::uint64_t connects = 0;
  std::uint64_t hintsSent = 0;
  std::uint64_t penalties = 0;
  std::uint64_t agentErrors = 0;         // error frames the agent sent
  std::uint64_t logLinesSuppressed = 0;  // guest-caused log lines over the budget
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
  void tick();
  // Runs on the io_context after every status the agent sends (the snapshot
  // already has it). It must not block; it may schedule work.
  using StatusHandler = std::function<void(const protocol::Status&)>;
  void onStatus(StatusHandler handler);
  // Runs on the io_context when the agent becomes cooperative: its first
  // valid acknowledgement on a connection, or one after it had stopped
  // acknowledging. Same rules as onStatus.
  using CooperationHandler = std::function<void()>;
  void onCooperation(CooperationHandler handler);

  [[nodiscard]] ChannelSnapshot snapshot() const;
  [[nodiscard]] const std::string& socketPath() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace vcpufold::hostd
