// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/transport.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "vcpufold/common/system_paths.h"

namespace vcpufold::agent {
namespace {

constexpr std::size_t kMaxQueuedBytes = 64 * 1024;
constexpr std::size_t kReadChunk = 8192;

// Frames waiting to be written; whole frames only, bounded.
class OutboundQueue {
 public:
  bool push(std::string_view frame) {
    if (pending_.size() + frame.size() > kMaxQueuedBytes) return false;
    pending_.append(frame);
    return true;
  }
  [[nodiscard]] bool empty() const { return pending_.empty(); }
  void clear() { pending_.clear(); }
  // Writes what the descriptor takes now; false on a hard error.
  bool writeTo(int fd) {
    while (!pending_.empty()) {
      const ssize_t written = ::write(fd, pending_.data(), pending_.size());
      if (written > 0) {
        pending_.erase(0, static_cast<std::size_t>(written));
        continue;
      }
      if (written < 0 && errno == EINTR) continue;
      return written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
    return true;
  }

 private:
  std::string pending_;
};

void closeFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Exponential backoff between least and most.
struct Backoff {
  std::chrono::milliseconds least, most, current;
  std::chrono::milliseconds next() {
    const auto delay = current;
    current = std::min(current * 2, most);
    return delay;
  }
  void reset() { current = least; }
};

// The guest side of a virtio-serial port. A port has no connection state a
// reader can wait on: while no host is connected, read() returns 0 (EOF) at
// once and poll() reports POLLIN|POLLHUP, so the agent probes on a timer
// instead; read() failing with EAGAIN means a host is there with nothing to
// say. ENODEV means the port was unplugged: close, find it again by name.
class VirtioPortTransport final : public Transport {
 public:
  VirtioPortTransport(RootedFs fs, std::string fixedPath, std::string portName)
      : fs_(std::move(fs)), fixedPath_(std::move(fixedPath)), portName_(std::move(portName)) {}
  ~VirtioPortTransport() override { closeFd(fd_); }

  [[nodiscard]] std::string describe() const override {
    return "virtio port " + (path_.empty() ? portName_ : path_ + " (" + portName_ + ")");
  }
  [[nodiscard]] bool connected() const override { return connected_; }

  std::vector<pollfd> pollFds(MonotonicTime now, MonotonicTime& wakeAt) override {
    if (fd_ < 0 || !connected_) {
      wakeAt = std::min(wakeAt, std::max(nextAttempt_, now));
      return {};
    }
    short events = POLLIN;
    if (!outbound_.empty()) events |= POLLOUT;
    return {pollfd{fd_, events, 0}};
  }

  void service(const std::vector<pollfd>& polled, MonotonicTime now, std::vector<TransportEvent>& events) override {
    lastNow_ = now;
    events.insert(events.end(), deferred_.begin(), deferred_.end());
    deferred_.clear();
    if (fd_ < 0) {
      if (now >= nextAttempt_) open(now, events);
      if (fd_ < 0) return;
    }
    if (!connected_) {
      if (now >= nextAttempt_) readAvailable(now, events);
      return;
    }
    if (polled.empty()) return;
    if (polled[0].revents & (POLLIN | POLLHUP | POLLERR)) readAvailable(now, events);
    if (fd_ >= 0 && connected_ && (polled[0].revents & POLLOUT) && !outbound_.writeTo(fd_)) lose(now, events, errno);
  }

  bool send(std::string_view frame) override {
    if (!connected_ || !outbound_.push(frame)) return false;
    if (!outbound_.writeTo(fd_)) {
      lose(lastNow_, deferred_, errno);  // reported at the next service()
      return false;
    }
    return true;
  }

  void flush(int timeoutMs) override {
    if (fd_ < 0 || !connected_ || outbound_.empty()) return;
    pollfd fd{fd_, POLLOUT, 0};
    if (::poll(&fd, 1, timeoutMs) > 0) outbound_.writeTo(fd_);
  }

 private:
  void open(MonotonicTime now, std::vector<TransportEvent>& events) {
    std::string path = fixedPath_;
    if (path.empty()) {
      auto found = findVirtioPort(fs_, portName_);
      if (!found) {
        retryOpenLater(now, events, found.error().message);
        return;
      }
      path = *found;
    }
    // O_CLOEXEC: a port can be open only once, a child must not hold it.
    fd_ = ::open(fs_.resolve(path).c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd_ < 0) {
      retryOpenLater(now, events, path + ": " + std::strerror(errno));
      return;
    }
    path_ = path;
    openBackoff_.reset();
    events.push_back({TransportEvent::Kind::Note, "opened " + path_});
  }

  void retryOpenLater(MonotonicTime now, std::vector<TransportEvent>& events, const std::string& why) {
    const auto delay = openBackoff_.next();
    nextAttempt_ = now + delay;
    if (why != lastOpenError_) events.push_back({TransportEvent::Kind::Note, why + "; retrying"});
    lastOpenError_ = why;
  }

  void readAvailable(MonotonicTime now, std::vector<TransportEvent>& events) {
    char buffer[kReadChunk];
    for (int reads = 0; reads < 16; ++reads) {  // bounded: a flood cannot hold the loop
      const ssize_t got = ::read(fd_, buffer, sizeof buffer);
      if (got > 0) {
        markConnected(events);
        events.push_back({TransportEvent::Kind::Data, std::string(buffer, static_cast<std::size_t>(got))});
        continue;
      }
      if (got == 0) {  // no host connected
        if (connected_) {
          connected_ = false;
          outbound_.clear();
          events.push_back({TransportEvent::Kind::Disconnected, "host closed the port"});
        }
        nextAttempt_ = now + kProbe;
        return;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        markConnected(events);
        return;
      }
      lose(now, events, errno);
      return;
    }
  }

  void markConnected(std::vector<TransportEvent>& events) {
    if (connected_) return;
    connected_ = true;
    events.push_back({TransportEvent::Kind::Connected, "host connected"});
  }

  void lose(MonotonicTime now, std::vector<TransportEvent>& events, int error) {
    events.push_back({TransportEvent::Kind::Note, path_ + ": " + std::strerror(error) + "; reopening"});
    if (connected_) events.push_back({TransportEvent::Kind::Disconnected, "port lost"});
    connected_ = false;
    outbound_.clear();
    closeFd(fd_);
    nextAttempt_ = now + openBackoff_.next();
  }

  static constexpr std::chrono::milliseconds kProbe{250};
  RootedFs fs_;
  std::string fixedPath_;
  std::string portName_;
  std::string path_;
  int fd_ = -1;
  bool connected_ = false;
  MonotonicTime lastNow_;
  std::vector<TransportEvent> deferred_;  // found while sending, reported by service()
  MonotonicTime nextAttempt_;  // the epoch: at once
  Backoff openBackoff_{std::chrono::milliseconds(250), std::chrono::milliseconds(10'000), std::chrono::milliseconds(250)};
  std::string lastOpenError_;
  OutboundQueue outbound_;
};

class UnixListenTransport final : public Transport {
 public:
  explicit UnixListenTransport(std::string path) : path_(std::move(path)) {}
  ~UnixListenTransport() override {
    closeFd(client_);
    if (listener_ >= 0) ::unlink(path_.c_str());
    closeFd(listener_);
  }

  [[nodiscard]] std::string describe() const override { return "unix-listen:" + path_; }
  [[nodiscard]] bool connected() const override { return client_ >= 0; }

  std::vector<pollfd> pollFds(MonotonicTime now, MonotonicTime& wakeAt) override {
    if (listener_ < 0) {
      wakeAt = std::min(wakeAt, std::max(nextAttempt_, now));
      return {};
    }
    if (client_ < 0) return {pollfd{listener_, POLLIN, 0}};
    short events = POLLIN;
    if (!outbound_.empty()) events |= POLLOUT;
    return {pollfd{client_, events, 0}};
  }

  void service(const std::vector<pollfd>& polled, MonotonicTime now, std::vector<TransportEvent>& events) override {
    events.insert(events.end(), deferred_.begin(), deferred_.end());
    deferred_.clear();
    if (listener_ < 0) {
      if (now >= nextAttempt_) listen(now, events);
      return;
    }
    if (polled.empty()) return;
    if (client_ < 0) {
      if (polled[0].revents & POLLIN) accept(events);
      return;
    }
    if (polled[0].revents & (POLLIN | POLLHUP | POLLERR)) readAvailable(events);
    if (client_ >= 0 && (polled[0].revents & POLLOUT) && !outbound_.writeTo(client_)) drop(events, "write failed");
  }

  bool send(std::string_view frame) override {
    if (client_ < 0 || !outbound_.push(frame)) return false;
    if (!outbound_.writeTo(client_)) {
      drop(deferred_, "write failed");  // reported at the next service()
      return false;
    }
    return true;
  }

  void flush(int timeoutMs) override {
    if (client_ < 0 || outbound_.empty()) return;
    pollfd fd{client_, POLLOUT, 0};
    if (::poll(&fd, 1, timeoutMs) > 0) outbound_.writeTo(client_);
  }

 private:
  void listen(MonotonicTime now, std::vector<TransportEvent>& events) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path_.size() >= sizeof address.sun_path) {
      events.push_back({TransportEvent::Kind::Note, path_ + ": socket path too long"});
      nextAttempt_ = now + std::chrono::milliseconds(10'000);
      return;
    }
    std::memcpy(address.sun_path, path_.c_str(), path_.size() + 1);
    listener_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    ::unlink(path_.c_str());  // a stale socket of an earlier run
    if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listener_, 1) != 0) {
      events.push_back({TransportEvent::Kind::Note, path_ + ": listen: " + std::strerror(errno) + "; retrying"});
      closeFd(listener_);
      nextAttempt_ = now + std::chrono::milliseconds(1000);
      return;
    }
    events.push_back({TransportEvent::Kind::Note, "listening on " + path_});
  }

  void accept(std::vector<TransportEvent>& events) {
    client_ = ::accept4(listener_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (client_ >= 0) events.push_back({TransportEvent::Kind::Connected, "host connected"});
  }

  void readAvailable(std::vector<TransportEvent>& events) {
    char buffer[kReadChunk];
    for (int reads = 0; reads < 16; ++reads) {
      const ssize_t got = ::read(client_, buffer, sizeof buffer);
      if (got > 0) {
        events.push_back({TransportEvent::Kind::Data, std::string(buffer, static_cast<std::size_t>(got))});
        continue;
      }
      if (got < 0 && errno == EINTR) continue;
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      drop(events, got == 0 ? "host closed the connection" : std::strerror(errno));
      return;
    }
  }

  void drop(std::vector<TransportEvent>& events, const std::string& why) {
    closeFd(client_);
    outbound_.clear();
    events.push_back({TransportEvent::Kind::Disconnected, why});
  }

  std::string path_;
  int listener_ = -1;
  int client_ = -1;
  MonotonicTime nextAttempt_;  // the epoch: at once
  OutboundQueue outbound_;
  std::vector<TransportEvent> deferred_;
};

}  // namespace

Expected<std::string> findVirtioPort(const RootedFs& fs, const std::string& portName) {
  for (const auto& port : fs.listDirectory(paths::kVirtioPortsDir)) {
    auto name = fs.readFile(std::string(paths::kVirtioPortsDir) + "/" + port + "/name");
    if (!name) continue;
    std::string trimmed = *name;
    while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == ' ')) trimmed.pop_back();
    if (trimmed == portName) return std::string(paths::kDevDir) + "/" + port;
  }
  return Error{"no virtio port named " + portName + " in " + paths::kVirtioPortsDir};
}

Expected<std::unique_ptr<Transport>> makeTransport(const RootedFs& fs, const std::string& spec,
                                                   const std::string& portName) {
  static constexpr std::string_view kUnixListen = "unix-listen:";
  if (spec.rfind(kUnixListen, 0) == 0) {
    const std::string path = spec.substr(kUnixListen.size());
    if (path.empty()) return Error{"unix-listen: needs a socket path"};
    return std::unique_ptr<Transport>(std::make_unique<UnixListenTransport>(path));
  }
  return std::unique_ptr<Transport>(std::make_unique<VirtioPortTransport>(fs, spec, portName));
}

}  // namespace vcpufold::agent
