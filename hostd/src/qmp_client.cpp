#include "vcpufold/hostd/qmp_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>

namespace vcpufold::hostd {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kMaxLine = 1 << 20;  // query-cpus-fast of a 4096-vCPU VM stays well below

int remainingMs(Clock::time_point deadline) {
  return static_cast<int>(std::max<long>(
      0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count()));
}

}  // namespace

Expected<std::vector<QmpVcpu>> parseQueryCpusFast(const nlohmann::json& result) {
  if (!result.is_array()) return Error{"query-cpus-fast: expected an array"};
  std::vector<QmpVcpu> vcpus;
  for (const auto& entry : result) {
    const auto index = entry.find("cpu-index");
    const auto thread = entry.find("thread-id");
    if (!entry.is_object() || index == entry.end() || thread == entry.end() || !index->is_number_unsigned() ||
        !thread->is_number_integer() || thread->get<long long>() <= 0)
      return Error{"query-cpus-fast: an entry without cpu-index or thread-id"};
    vcpus.push_back(QmpVcpu{index->get<unsigned>(), thread->get<int>()});
  }
  std::sort(vcpus.begin(), vcpus.end(), [](const QmpVcpu& a, const QmpVcpu& b) { return a.cpuIndex < b.cpuIndex; });
  return vcpus;
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
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return Error{socketPath + ": connect: " + why};
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
  if (::send(fd_, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size()))
    return Error{std::string("QMP send: ") + std::strerror(errno)};
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
  for (;;) {
    auto answer = readLine(remainingMs(deadline));
    if (!answer) return answer.error();
    nlohmann::json message;
    try {
      message = nlohmann::json::parse(*answer);
    } catch (const nlohmann::json::exception&) {
      return Error{"QMP sent something that is not JSON"};
    }
    if (message.contains("event")) {
      events_.push_back({message["event"].is_string() ? message["event"].get<std::string>() : "?",
                         message.value("data", nlohmann::json::object()).dump()});
      continue;
    }
    if (message.contains("return")) return message["return"].dump();
    if (message.contains("error")) return Error{"QMP error: " + message["error"].value("desc", std::string("?"))};
  }
}

std::vector<QmpEvent> QmpClient::drainEvents() {
  while (fd_ >= 0) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) break;
    auto line = readLine(0);
    if (!line) break;
    try {
      const auto message = nlohmann::json::parse(*line);
      if (message.contains("event"))
        events_.push_back({message["event"].is_string() ? message["event"].get<std::string>() : "?",
                           message.value("data", nlohmann::json::object()).dump()});
    } catch (const nlohmann::json::exception&) {
    }
  }
  return std::exchange(events_, {});
}

}  // namespace vcpufold::hostd
