// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/qemu_threads.h"

#include <charconv>

#include "vcpufold/common/system_paths.h"
#include "vcpufold/protocol/cpulist.h"

namespace vcpufold::hostd {
namespace {

template <typename Number>
std::optional<Number> numberIn(std::string_view text) {
  Number value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data()) return std::nullopt;
  return value;
}

std::string taskDirOf(pid_t pid) { return std::string(paths::kProcDir) + "/" + std::to_string(pid) + "/task"; }

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

Expected<std::vector<pid_t>> findQemuVcpuThreads(const RootedFs& fs, pid_t pid) {
  const std::string taskDir = taskDirOf(pid);
  std::map<pid_t, std::string> comms;
  for (const auto& entry : fs.listDirectory(taskDir)) {
    const auto tid = numberIn<pid_t>(entry);
    if (!tid) continue;
    if (auto comm = fs.readFile(taskDir + "/" + entry + "/comm")) comms[*tid] = *comm;
  }
  auto threads = vcpuThreadsFromNames(comms);
  if (!threads) return threads.error().withContext(taskDir);
  return threads;
}

Expected<protocol::CpuSet> parseCpusAllowedList(std::string_view status) {
  constexpr std::string_view kKey = "Cpus_allowed_list:";
  for (std::string_view rest = status; !rest.empty();) {
    const auto end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    if (line.substr(0, kKey.size()) != kKey) continue;
    line.remove_prefix(kKey.size());
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    auto cpus = protocol::parseCpuList(line);
    if (!cpus) return cpus.error().withContext("Cpus_allowed_list");
    if (cpus->empty()) return Error{"Cpus_allowed_list is empty"};
    return cpus;
  }
  return Error{"no Cpus_allowed_list line"};
}

Expected<std::vector<protocol::CpuSet>> readThreadAffinities(const RootedFs& fs, pid_t pid,
                                                             const std::vector<pid_t>& threads) {
  std::vector<protocol::CpuSet> affinities;
  for (const pid_t tid : threads) {
    const std::string path = taskDirOf(pid) + "/" + std::to_string(tid) + "/status";
    auto text = fs.readFile(path);
    auto cpus = text ? parseCpusAllowedList(*text) : Expected<protocol::CpuSet>(text.error());
    if (!cpus) return cpus.error().withContext(path);
    affinities.push_back(*cpus);
  }
  return affinities;
}

Expected<std::uint64_t> readMainThreadRunQueueWaitNs(const RootedFs& fs, pid_t pid) {
  const std::string path = taskDirOf(pid) + "/" + std::to_string(pid) + "/schedstat";
  auto text = fs.readFile(path);
  auto parsed = text ? parseSchedstat(*text) : Expected<VcpuCounters>(text.error());
  if (!parsed) return parsed.error().withContext(path);
  return parsed->delayNs;
}

Expected<std::vector<VcpuCounters>> sampleQemuVcpuThreads(const RootedFs& fs, pid_t pid) {
  const std::string taskDir = taskDirOf(pid);
  auto threads = findQemuVcpuThreads(fs, pid);
  if (!threads) return threads.error();
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
