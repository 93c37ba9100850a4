#include "vcpufold/hostd/qemu_threads.h"

#include <charconv>

#include "vcpufold/common/system_paths.h"

namespace vcpufold::hostd {
namespace {

template <typename Number>
std::optional<Number> numberIn(std::string_view text) {
  Number value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<unsigned> vcpuIndexOfThreadName(std::string_view comm) {
  while (!comm.empty() && comm.back() == '\n') comm.remove_suffix(1);
  constexpr std::string_view kPrefix = "CPU ";
  if (comm.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  comm.remove_prefix(kPrefix.size());
  const auto slash = comm.find('/');
  if (slash == std::string_view::npos || slash == 0) return std::nullopt;
  const auto digits = comm.substr(0, slash);
  if (digits.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  return numberIn<unsigned>(digits);
}

Expected<std::vector<pid_t>> vcpuThreadsFromNames(const std::map<pid_t, std::string>& comms) {
  std::map<unsigned, pid_t> byIndex;
  for (const auto& [tid, comm] : comms)
    if (const auto index = vcpuIndexOfThreadName(comm); index && !byIndex.emplace(*index, tid).second)
      return Error{"two threads are named for vCPU " + std::to_string(*index)};
  if (byIndex.empty()) return Error{"no thread named \"CPU N/...\" (is this QEMU?)"};
  std::vector<pid_t> threads;
  for (const auto& [index, tid] : byIndex) {
    if (index != threads.size()) return Error{"no thread for vCPU " + std::to_string(threads.size())};
    threads.push_back(tid);
  }
  return threads;
}

Expected<pid_t> readLibvirtQemuPid(const RootedFs& fs, const std::string& domain) {
  const std::string path = std::string(paths::kLibvirtQemuRunDir) + "/" + domain + ".pid";
  auto text = fs.readFile(path);
  if (!text) return text.error();
  const auto pid = numberIn<pid_t>(*text);
  if (!pid || *pid <= 0) return Error{path + ": not a pid"};
  return *pid;
}

Expected<std::vector<VcpuCounters>> sampleQemuVcpuThreads(const RootedFs& fs, pid_t pid) {
  const std::string taskDir = std::string(paths::kProcDir) + "/" + std::to_string(pid) + "/task";
  std::map<pid_t, std::string> comms;
  for (const auto& entry : fs.listDirectory(taskDir)) {
    const auto tid = numberIn<pid_t>(entry);
    if (!tid) continue;
    if (auto comm = fs.readFile(taskDir + "/" + entry + "/comm")) comms[*tid] = *comm;
  }
  auto threads = vcpuThreadsFromNames(comms);
  if (!threads) return threads.error().withContext(taskDir);
  std::vector<VcpuCounters> counters;
  for (const pid_t tid : *threads) {
    auto text = fs.readFile(taskDir + "/" + std::to_string(tid) + "/schedstat");
    auto parsed = text ? parseSchedstat(*text) : Expected<VcpuCounters>(text.error());
    if (!parsed) return parsed.error().withContext(taskDir + "/" + std::to_string(tid));
    counters.push_back(*parsed);
  }
  return counters;
}

}  // namespace vcpufold::hostd
