// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/topology.h"

#include <algorithm>
#include <map>

#include "vcpufold/common/cpu_list_files.h"
#include "vcpufold/common/system_paths.h"
#include "vcpufold/protocol/cpulist.h"

namespace vcpufold::agent {
namespace {

std::string cpuPath(unsigned cpu, const char* leaf) {
  return std::string(paths::kCpuDir) + "/cpu" + std::to_string(cpu) + "/" + leaf;
}

}  // namespace

Expected<Topology> readTopology(const RootedFs& fs) {
  Topology topology;
  auto onlineText = fs.readFile(paths::kCpuOnline);
  if (!onlineText) return onlineText.error();
  auto online = protocol::parseCpuListFile(*onlineText);
  if (!online) return online.error().withContext(paths::kCpuOnline);
  if (online->empty()) return Error{std::string(paths::kCpuOnline) + ": no online CPUs"};
  topology.online = *online;
  topology.possible = readOptionalCpuListFile(fs, paths::kCpuPossible) | topology.online;

  const CpuSet quiet = readQuietCpus(fs);
  topology.housekeeping = topology.online - quiet;
  if (topology.housekeeping.empty()) topology.housekeeping = topology.online;

  // NUMA node of each CPU; CPUs in no node file belong to node 0.
  std::map<unsigned, unsigned> nodeOf;
  for (const auto& entry : fs.listDirectory(paths::kNodeDir)) {
    if (entry.rfind("node", 0) != 0 || entry.size() == 4) continue;
    if (!std::all_of(entry.begin() + 4, entry.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    const auto node = static_cast<unsigned>(std::stoul(entry.substr(4)));
    const CpuSet cpus = readOptionalCpuListFile(fs, std::string(paths::kNodeDir) + "/" + entry + "/cpulist");
    for (unsigned cpu : cpus.toVector()) nodeOf[cpu] = node;
  }

  CpuSet assigned;
  std::map<unsigned, unsigned> nodeIndex;  // node id -> dense index, in id order
  for (unsigned cpu : topology.online.toVector()) nodeIndex.emplace(nodeOf.count(cpu) ? nodeOf[cpu] : 0, 0);
  unsigned index = 0;
  for (auto& [node, dense] : nodeIndex) dense = index++;
  topology.numaNodes = static_cast<unsigned>(nodeIndex.size());

  for (unsigned cpu : topology.online.toVector()) {
    if (assigned.contains(cpu)) continue;
    // thread_siblings_list is the long-standing name; core_cpus_list the newer one.
    CpuSet siblings = readOptionalCpuListFile(fs, cpuPath(cpu, "topology/thread_siblings_list"));
    if (siblings.empty()) siblings = readOptionalCpuListFile(fs, cpuPath(cpu, "topology/core_cpus_list"));
    siblings = (siblings & topology.online) - assigned;
    siblings.insert(cpu);
    Core core;
    core.threads = siblings;
    core.node = nodeIndex[nodeOf.count(cpu) ? nodeOf[cpu] : 0];
    assigned = assigned | siblings;
    topology.threadsPerCore = std::max(topology.threadsPerCore, static_cast<unsigned>(siblings.size()));
    topology.cores.push_back(core);
  }
  return topology;
}

}  // namespace vcpufold::agent
