// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/qmp_client.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

namespace vcpufold::hostd {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kMaxLine = 1 << 20;  // query-cpus-fast of a 4096-vCPU VM stays well below
constexpr std::size_t kMaxEventsKept = 64;  // events between two drains; older ones are dropped (counted)
constexpr int kMaxJsonDepth = 32;           // QMP replies nest a few levels; deeper is not QEMU

// Nesting depth of a JSON text, strings skipped: checked before parsing so a
// peer cannot make the parser or the value's destructor recurse without end.
int jsonDepth(const std::string& text) {
  int depth = 0;
  int deepest = 0;
  bool inString = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') inString = true;
    if (c == '{' || c == '[') deepest = std::max(deepest, ++depth);
    if (c == '}' || c == ']') --depth;
    if (deepest > kMaxJsonDepth) break;
  }
  return deepest;
}

std::string dumped(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

int remainingMs(Clock::time_point deadline) {
  return static_cast<int>(std::max<long>(
      0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count()));
}

}  // namespace

Expected<QmpMessage> parseQmpMessage(const std::string& line) {
  if (jsonDepth(line) > kMaxJsonDepth) return Error{"QMP sent JSON nested deeper than " + std::to_string(kMaxJsonDepth)};
  nlohmann::json message;
  try {
    message = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception&) {
    return Error{"QMP sent something that is not JSON"};
  }
  if (!message.is_object()) return Error{"QMP sent JSON that is not an object"};
  if (const auto event = message.find("event"); event != message.end()) {
    const auto data = message.find("data");
    return QmpMessage{QmpMessage::Kind::Event, event->is_string() ? event->get<std::string>() : "?",
                      data != message.end() ? dumped(*data) : "{}"};
  }
  if (const auto result = message.find("return"); result != message.end())
    return QmpMessage{QmpMessage::Kind::Return, dumped(*result), {}};
  if (const auto error = message.find("error"); error != message.end()) {
    const auto desc = error->is_object() ? error->find("desc") : error->end();
    return QmpMessage{QmpMessage::Kind::Error,
                      desc != error->end() && desc->is_string() ? desc->get<std::string>() : "(no description)", {}};
  }
  if (message.contains("QMP")) return QmpMessage{QmpMessage::Kind::Greeting, dumped(message["QMP"]), {}};
  return QmpMessage{QmpMessage::Kind::Other, {}, {}};
}

Expected<std::vector<QmpVcpu>> parseQueryCpusFast(const nlohmann::json& result) {
  if (!result.is_array()) return Error{"query-cpus-fast: expected an array"};
  // cpu-index is below 4096 and unique, so no valid answer has more entries.
  if (result.size() > 4096) return Error{"query-cpus-fast: " + std::to_string(result.size()) + " entries"};
  std::vector<QmpVcpu> vcpus;
  for (const auto& entry : result) {
    const auto index = entry.find("cpu-index");
    const auto thread = entry.find("thread-id");
    if (!entry.is_object() || index == entry.end() || thread == entry.end() || !index->is_number_unsigned() ||
        !thread->is_number_integer() || thread->get<long long>() <= 0)
      return Error{"query-cpus-fast: an entry without cpu-index or thread-id"};
    if (index->get<std::uint64_t>() >= 4096 || thread->get<long long>() > std::numeric_limits<int>::max())
      return Error{"query-cpus-fast: cpu-index or thread-id out of range"};
    vcpus.push_back(QmpVcpu{index->get<unsigned>(), thread->get<int>()});
  }
  std::sort(vcpus.begin(), vcpus.end(), [](const QmpVcpu& a, const QmpVcpu& b) { return a.cpuIndex < b.cpuIndex; });
  // Each vCPU is one thread: a repeated index or thread would count one
  // thread's time twice (or hide a vCPU), so the answer is refused whole.
  for (std::size_t i = 1; i < vcpus.size(); ++i)
    if (vcpus[i].cpuIndex == vcpus[i - 1].cpuIndex)
      return Error{"query-cpus-fast: cpu-index " + std::to_string(vcpus[i].cpuIndex) + " listed twice"};
  std::vector<int> threads;
  threads.reserve(vcpus.size());
  for (const QmpVcpu& vcpu : vcpus) threads.push_back(vcpu.threadId);
  std::sort(threads.begin(), threads.end());
  if (const auto twice = std::adjacent_find(threads.begin(), threads.end()); twice != threads.end())
    return Error{"query-cpus-fast: thread-id " + std::to_string(*twice) + " listed for two vCPUs"};
  return vcpus;
}

Expected<std::vector<QmpVcpu>> parseQueryCpusJson(const std::string& answer) {
  try {
    return parseQueryCpusFast(nlohmann::json::parse(answer));
  } catch (const nlohmann::json::exception&) {
    return Error{"query-cpus-fast: the answer is not JSON"};
  }
}

QmpClient::QmpClient(int fd) : fd_(fd) {
  ucred credentials{};
  socklen_t length = sizeof credentials;
  if (::getsockopt(fd_, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0) peerPid_ = credentials.pid;
}

QmpClient::~QmpClient() {
  if (fd_ >= 0) ::close(fd_);
}

Expected<std::unique_ptr<QmpClient>> QmpClient::connect(const std::string& socketPath, int timeoutMs) {
  sockaddr_un address{};
  if (socketPath.size() >= sizeof address.sun_path) return Error{socketPath + ": path too long"};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, socketPath.c_str(), socketPath.size() + 1);
  // Non-blocking: a monitor whose listen queue is full (a hung QEMU, or a
  // socket nobody accepts on) answers EAGAIN at once instead of blocking.
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Error{socketPath + ": socket: " + std::strerror(errno)};
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    int why = errno;
    if (why == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      socklen_t length = sizeof why;
      why = ::poll(&p, 1, timeoutMs) <= 0 ? ETIMEDOUT
            : ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &why, &length) == 0 ? why
                                                                            : errno;
    }
    if (why != 0) {
      ::close(fd);
      return Error{socketPath + ": connect: " + (why == EAGAIN ? "the monitor accepts no connections (queue full)"
                                                                 : std::string(std::strerror(why)))};
    }
  }
  std::unique_ptr<QmpClient> client(new QmpClient(fd));
  auto greeting = client->readLine(timeoutMs);
  if (!greeting) return greeting.error().withContext(socketPath);
  if (greeting->find("\"QMP\"") == std::string::npos) return Error{socketPath + ": no QMP greeting"};
  auto capabilities = client->execute(R"({"execute":"qmp_capabilities"})", timeoutMs);
  if (!capabilities) return capabilities.error().withContext(socketPath);
  return client;
}

Expected<std::string> QmpClient::readLine(int timeoutMs) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
  for (;;) {
    if (const auto newline = buffer_.find('\n'); newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    if (fd_ < 0) return Error{"QMP connection closed"};
    if (buffer_.size() > kMaxLine) return Error{"QMP line longer than 1 MiB"};
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, remainingMs(deadline));
    if (ready == 0) return Error{"QMP: no answer within " + std::to_string(timeoutMs) + " ms"};
    char chunk[8192];
    const ssize_t n = ready > 0 ? ::recv(fd_, chunk, sizeof chunk, 0) : -1;
    if (n <= 0) {
      ::close(fd_);
      fd_ = -1;
      return Error{"QMP connection closed"};
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

Expected<std::string> QmpClient::execute(const std::string& command, int timeoutMs) {
  if (fd_ < 0) return Error{"QMP connection closed"};
  const std::string line = command + "\n";
  // The socket is non-blocking: a monitor that does not read cannot hold us here.
  if (::send(fd_, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size()))
    return Error{std::string("QMP send: ") + std::strerror(errno)};
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
  // The deadline holds even against a monitor that streams events without end.
  while (Clock::now() < deadline) {
    auto answer = readLine(remainingMs(deadline));
    if (!answer) return answer.error();
    auto message = parseQmpMessage(*answer);
    if (!message) return message.error();
    switch (message->kind) {
      case QmpMessage::Kind::Event:
        keepEvent(QmpEvent{message->text, message->detailJson});
        continue;
      case QmpMessage::Kind::Return:
        return message->text;
      case QmpMessage::Kind::Error:
        return Error{"QMP error: " + message->text};
      case QmpMessage::Kind::Greeting:
      case QmpMessage::Kind::Other:
        continue;  // not an answer; keep waiting for one
    }
  }
  return Error{"QMP: no answer within " + std::to_string(timeoutMs) + " ms"};
}

void QmpClient::keepEvent(QmpEvent event) {
  if (events_.size() >= kMaxEventsKept) {
    events_.erase(events_.begin());
    ++eventsDropped_;
  }
  events_.push_back(std::move(event));
}

std::vector<QmpEvent> QmpClient::drainEvents() {
  while (fd_ >= 0) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) break;
    auto line = readLine(0);
    if (!line) break;
    if (auto message = parseQmpMessage(*line); message && message->kind == QmpMessage::Kind::Event)
      keepEvent(QmpEvent{message->text, message->detailJson});
    // Bounded: events arriving faster than they are read wait for the next drain.
    if (events_.size() >= kMaxEventsKept) break;
  }
  return std::exchange(events_, {});
}

}  // namespace vcpufold::hostd
