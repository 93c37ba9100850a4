// SPDX-License-Identifier: GPL-2.0-or-later
#include "qmp_responder.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <nlohmann/json.hpp>

namespace vcpufold::bench {

namespace {

void sendLine(int fd, const nlohmann::json& message) {
  const std::string line = message.dump() + "\r\n";
  (void)::send(fd, line.data(), line.size(), MSG_NOSIGNAL);
}

nlohmann::json answer(const std::string& line, const std::string& name, const std::vector<long>& tids) {
  nlohmann::json request;
  try {
    request = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception&) {
    return {{"error", {{"class", "GenericError"}, {"desc", "JSON parse error"}}}};
  }
  const std::string command = request.value("execute", "");
  if (command == "qmp_capabilities") return {{"return", nlohmann::json::object()}};
  if (command == "query-name") return {{"return", {{"name", name}}}};
  if (command == "query-cpus-fast") {
    nlohmann::json cpus = nlohmann::json::array();
    for (std::size_t i = 0; i < tids.size(); ++i)
      cpus.push_back({{"cpu-index", i},
                      {"thread-id", tids[i]},
                      {"target", "x86_64"},
                      {"props", {{"core-id", 0}, {"thread-id", 0}, {"socket-id", i}}},
                      {"qom-path", "/machine/unattached/device[" + std::to_string(i) + "]"}});
    return {{"return", cpus}};
  }
  return {{"error", {{"class", "CommandNotFound"}, {"desc", "The command " + command + " has not been found"}}}};
}

// Waits up to 100 ms for `fd` to become readable, so loops notice stop().
bool readable(int fd) {
  pollfd entry{fd, POLLIN, 0};
  return ::poll(&entry, 1, 100) > 0;
}

}  // namespace

QmpResponder::~QmpResponder() { stop(); }

bool QmpResponder::listen(const std::string& path) {
  path_ = path;
  ::unlink(path.c_str());
  listener_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listener_, 4) != 0)
    return false;
  acceptor_ = std::thread([this] { acceptLoop(); });
  return true;
}

void QmpResponder::stop() {
  if (stopping_.exchange(true)) return;
  if (acceptor_.joinable()) acceptor_.join();
  for (auto& client : clients_)
    if (client.joinable()) client.join();
  if (listener_ >= 0) ::close(listener_);
  if (!path_.empty()) ::unlink(path_.c_str());
}

void QmpResponder::acceptLoop() {
  while (!stopping_) {
    if (!readable(listener_)) continue;
    const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client >= 0) clients_.emplace_back([this, client] { serve(client); });
  }
}

void QmpResponder::serve(int client) {
  sendLine(client, {{"QMP",
                     {{"version", {{"qemu", {{"major", 7}, {"minor", 2}, {"micro", 0}}}}},
                      {"capabilities", nlohmann::json::array()}}}});
  std::string buffer;
  char chunk[4096];
  while (!stopping_) {
    if (!readable(client)) continue;
    const ssize_t n = ::recv(client, chunk, sizeof chunk, 0);
    if (n <= 0) break;
    buffer.append(chunk, static_cast<std::size_t>(n));
    for (std::size_t newline; (newline = buffer.find('\n')) != std::string::npos;) {
      const std::string line = buffer.substr(0, newline);
      buffer.erase(0, newline + 1);
      if (mute_ && mute_()) continue;
      sendLine(client, answer(line, name_, threadIds_()));
    }
  }
  ::close(client);
}

}  // namespace vcpufold::bench
