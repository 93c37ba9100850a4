// SPDX-License-Identifier: GPL-2.0-or-later
#include "qmp_responder.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
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

// Sleeps until `fd` is readable (true) or stop() was called (false), with no
// timeout: QEMU's monitor waits in its main loop until a client writes, and a
// thread here that woke on a timer would sit in the VM's CPU group and skew
// the host's weighted split between the VMs.
bool readableUnlessStopped(int fd, int stopSignal) {
  pollfd entries[2] = {{fd, POLLIN, 0}, {stopSignal, POLLIN, 0}};
  while (true) {
    if (::poll(entries, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (entries[1].revents != 0) return false;
    if (entries[0].revents != 0) return true;
  }
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
  stopSignal_ = ::eventfd(0, EFD_CLOEXEC);
  if (stopSignal_ < 0 || listener_ < 0 ||
      ::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(listener_, 4) != 0)
    return false;
  acceptor_ = std::thread([this] { acceptLoop(); });
  return true;
}

void QmpResponder::stop() {
  if (stopping_.exchange(true)) return;
  // The counter is never read back, so the eventfd stays readable and wakes
  // every thread's poll, now and later. Adding 1 to a zero counter cannot
  // fail; should it, the threads would never be joined, so say so.
  if (stopSignal_ >= 0) {
    const std::uint64_t one = 1;
    if (::write(stopSignal_, &one, sizeof one) != static_cast<ssize_t>(sizeof one))
      std::perror("vcpufold-emulated-vm: waking the QMP monitor's threads");
  }
  if (acceptor_.joinable()) acceptor_.join();
  for (auto& client : clients_)
    if (client.joinable()) client.join();
  if (listener_ >= 0) ::close(listener_);
  if (stopSignal_ >= 0) ::close(stopSignal_);
  if (!path_.empty()) ::unlink(path_.c_str());
}

void QmpResponder::acceptLoop() {
  while (readableUnlessStopped(listener_, stopSignal_)) {
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
  while (readableUnlessStopped(client, stopSignal_)) {
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
