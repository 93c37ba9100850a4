// vcpufold-emulated-vm: a process that looks like a VM to the host scheduler
// and to hostd, for tests and the contention bench (not part of the product).
// It runs N "vCPU" threads (busy or idle) and serves QMP on DIR/NAME.qmp:
// qmp_capabilities, query-name, and query-cpus-fast with the threads' real
// TIDs, so hostd reads their real schedstat.
// Usage: vcpufold-emulated-vm --name NAME --dir DIR --vcpus N [--busy K] [--seconds S]

#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace {

std::atomic<bool> stopping{false};

void onSignal(int) { stopping = true; }

void sendLine(int fd, const nlohmann::json& message) {
  const std::string line = message.dump() + "\r\n";
  (void)::send(fd, line.data(), line.size(), MSG_NOSIGNAL);
}

}  // namespace

int main(int argc, char** argv) {
  std::string name, dir;
  int vcpus = 1, busy = 0, seconds = 3600;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--name") name = argv[i + 1];
    if (flag == "--dir") dir = argv[i + 1];
    if (flag == "--vcpus") vcpus = std::stoi(argv[i + 1]);
    if (flag == "--busy") busy = std::stoi(argv[i + 1]);
    if (flag == "--seconds") seconds = std::stoi(argv[i + 1]);
  }
  if (name.empty() || dir.empty() || vcpus < 1) {
    std::fprintf(stderr, "usage: vcpufold-emulated-vm --name NAME --dir DIR --vcpus N [--busy K] [--seconds S]\n");
    return 2;
  }
  std::signal(SIGTERM, onSignal);
  std::signal(SIGINT, onSignal);

  std::vector<std::atomic<long>> tids(static_cast<std::size_t>(vcpus));
  std::vector<std::thread> threads;
  for (int n = 0; n < vcpus; ++n) {
    threads.emplace_back([n, busy, &tids] {
      tids[static_cast<std::size_t>(n)] = ::syscall(SYS_gettid);
      volatile unsigned long sink = 0;
      while (!stopping) {
        if (n < busy) {
          for (int i = 0; i < 100000; ++i) sink = sink + static_cast<unsigned long>(i);
        } else {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
      }
    });
  }
  while (std::any_of(tids.begin(), tids.end(), [](const std::atomic<long>& t) { return t == 0; }))
    std::this_thread::sleep_for(std::chrono::milliseconds(1));

  const std::string path = dir + "/" + name + ".qmp";
  ::unlink(path.c_str());
  const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(listener, 4) != 0) {
    std::perror(path.c_str());
    return 1;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  std::thread([deadline] {
    while (!stopping && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stopping = true;
  }).detach();
  std::thread server([&] {
    while (!stopping) {
      timeval wait{0, 100000};
      fd_set set;
      FD_ZERO(&set);
      FD_SET(listener, &set);
      if (::select(listener + 1, &set, nullptr, nullptr, &wait) <= 0) continue;
      const int client = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      std::thread([client, &tids, &name] {
        sendLine(client, {{"QMP", {{"version", {{"qemu", {{"major", 7}, {"minor", 2}, {"micro", 0}}}}}, {"capabilities", nlohmann::json::array()}}}});
        std::string buffer;
        char chunk[4096];
        while (!stopping) {
          const ssize_t n = ::recv(client, chunk, sizeof chunk, 0);
          if (n <= 0) break;
          buffer.append(chunk, static_cast<std::size_t>(n));
          for (std::size_t newline; (newline = buffer.find('\n')) != std::string::npos;) {
            const std::string line = buffer.substr(0, newline);
            buffer.erase(0, newline + 1);
            nlohmann::json request;
            try {
              request = nlohmann::json::parse(line);
            } catch (const nlohmann::json::exception&) {
              sendLine(client, {{"error", {{"class", "GenericError"}, {"desc", "JSON parse error"}}}});
              continue;
            }
            const std::string command = request.value("execute", "");
            if (command == "qmp_capabilities") {
              sendLine(client, {{"return", nlohmann::json::object()}});
            } else if (command == "query-name") {
              sendLine(client, {{"return", {{"name", name}}}});
            } else if (command == "query-cpus-fast") {
              nlohmann::json cpus = nlohmann::json::array();
              for (std::size_t i = 0; i < tids.size(); ++i)
                cpus.push_back({{"cpu-index", i}, {"thread-id", tids[i].load()}, {"target", "x86_64"},
                                {"props", {{"core-id", 0}, {"thread-id", 0}, {"socket-id", i}}},
                                {"qom-path", "/machine/unattached/device[" + std::to_string(i) + "]"}});
              sendLine(client, {{"return", cpus}});
            } else {
              sendLine(client, {{"error", {{"class", "CommandNotFound"}, {"desc", "The command " + command + " has not been found"}}}});
            }
          }
        }
        ::close(client);
      }).detach();
    }
  });
  for (auto& thread : threads) thread.join();
  server.join();
  ::close(listener);
  ::unlink(path.c_str());
  return 0;
}
