// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/housekeeping_steering.h"

#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "vcpufold/agent/cgroup_cpuset_actuator.h"
#include "vcpufold/common/system_paths.h"
#include "vcpufold/protocol/cpulist.h"

namespace vcpufold::agent {
namespace {

std::string trimmed(std::string_view text) {
  std::size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return std::string(text.substr(begin, end - begin));
}

std::optional<unsigned> irqNumber(const std::string& name) {
  if (name.empty() || name.size() > 6) return std::nullopt;
  unsigned value = 0;
  for (const char c : name) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  return value;
}

std::string irqAffinityPath(unsigned irq) {
  return std::string(paths::kProcIrqDir) + "/" + std::to_string(irq) + "/smp_affinity_list";
}

}  // namespace

std::string formatCpuMask(const CpuSet& cpus) {
  const unsigned last = cpus.last().value_or(0);
  std::string out;
  // 32-bit words from the highest down, the first without leading zeros.
  for (int word = static_cast<int>(last / 32); word >= 0; --word) {
    std::uint32_t bits = 0;
    for (unsigned bit = 0; bit < 32; ++bit)
      if (cpus.contains(static_cast<unsigned>(word) * 32 + bit)) bits |= 1U << bit;
    char text[16];
    std::snprintf(text, sizeof text, out.empty() ? "%x" : "%08x", bits);
    out += (out.empty() ? "" : ",") + std::string(text);
  }
  return out;
}

Expected<CpuSet> parseCpuMask(std::string_view text) {
  const std::string mask = trimmed(text);
  if (mask.empty()) return Error{"empty CPU mask"};
  CpuSet cpus;
  unsigned bit = 0;
  unsigned digitsInWord = 0;
  for (auto it = mask.rbegin(); it != mask.rend(); ++it) {
    if (*it == ',') {
      if (digitsInWord != 8) return Error{"CPU mask \"" + mask + "\": a word that is not 8 hex digits"};
      digitsInWord = 0;
      continue;
    }
    if (!std::isxdigit(static_cast<unsigned char>(*it))) return Error{"CPU mask \"" + mask + "\": not hex"};
    const int nibble = std::isdigit(static_cast<unsigned char>(*it))
                           ? *it - '0'
                           : std::tolower(static_cast<unsigned char>(*it)) - 'a' + 10;
    for (int i = 0; i < 4; ++i, ++bit)
      if (nibble & (1 << i)) {
        if (bit >= protocol::kMaxCpus) return Error{"CPU mask \"" + mask + "\": CPU beyond the protocol's range"};
        cpus.insert(bit);
      }
    if (++digitsInWord > 8) return Error{"CPU mask \"" + mask + "\": a word longer than 8 hex digits"};
  }
  return cpus;
}

bool isIrqbalanceAmong(const std::vector<std::string>& comms) {
  for (const auto& comm : comms)
    if (trimmed(comm) == "irqbalance") return true;
  return false;
}

HousekeepingSteering::HousekeepingSteering(KnobWriter& knobs, std::string cgroupRoot) : knobs_(knobs) {
  state_ = loadState(knobs_.fs()).value_or(State{});
  state_.cgroupRoot = std::move(cgroupRoot);
}

std::optional<HousekeepingSteering::State> HousekeepingSteering::loadState(const RootedFs& fs) {
  auto text = fs.readFile(paths::kHousekeepingStateFile);
  if (!text) return std::nullopt;
  try {
    const auto json = nlohmann::json::parse(*text);
    State state;
    state.cgroupRoot = json.at("cgroup_root").get<std::string>();
    state.createdParked = json.at("created_parked_cgroup").get<bool>();
    for (const auto& [irq, affinity] : json.at("irq_affinity").items())
      if (auto number = irqNumber(irq)) state.irqAffinity[*number] = affinity.get<std::string>();
    if (json.contains("workqueue_mask") && json.at("workqueue_mask").is_string())
      state.workqueueMask = json.at("workqueue_mask").get<std::string>();
    return state;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

Expected<void> HousekeepingSteering::saveState() const {
  if (state_.empty()) {
    if (!knobs_.fs().exists(paths::kHousekeepingStateFile)) return {};
    return knobs_.fs().removeFile(paths::kHousekeepingStateFile);
  }
  nlohmann::json irqs = nlohmann::json::object();
  for (const auto& [irq, affinity] : state_.irqAffinity) irqs[std::to_string(irq)] = affinity;
  const nlohmann::json json{{"cgroup_root", state_.cgroupRoot},
                            {"created_parked_cgroup", state_.createdParked},
                            {"irq_affinity", irqs},
                            {"workqueue_mask", state_.workqueueMask ? nlohmann::json(*state_.workqueueMask)
                                                                    : nlohmann::json(nullptr)}};
  if (auto made = knobs_.fs().makeDirectory(paths::kAgentStateDir); !made) return made;
  return knobs_.fs().replaceFile(paths::kHousekeepingStateFile, json.dump() + "\n");
}

void HousekeepingSteering::checkIrqbalance(MonotonicTime now) {
  if (irqbalanceCheckedAt_ && now - *irqbalanceCheckedAt_ < kIrqbalanceCheck) return;
  irqbalanceCheckedAt_ = now;
  std::vector<std::string> comms;
  for (const auto& entry : knobs_.fs().listDirectory(paths::kProcDir)) {
    if (!irqNumber(entry)) continue;  // not a pid (the same all-digits rule)
    if (auto comm = knobs_.fs().readFile(std::string(paths::kProcDir) + "/" + entry + "/comm", 64))
      comms.push_back(*comm);
  }
  irqbalanceRuns_ = isIrqbalanceAmong(comms);
}

Expected<std::string> HousekeepingSteering::park(const CpuSet& parked) {
  const std::string cgroup = parkedCgroup();
  const std::string partitionFile = parkedPartitionFile();
  const std::string list = protocol::formatCpuList(parked);
  if (parkRefusedFor_ && *parkRefusedFor_ == parked) return std::string{};  // said when it was refused
  if (knobs_.fs().isDirectory(cgroup)) {
    auto cpus = knobs_.fs().readFile(cgroup + "/cpuset.cpus");
    auto partition = knobs_.fs().readFile(partitionFile);
    auto current = cpus ? protocol::parseCpuListFile(*cpus) : Expected<CpuSet>(cpus.error());
    const std::string type = partition ? trimmed(*partition) : std::string{};
    if (current && *current == parked && partition && type.find("invalid") == std::string::npos && type != "member")
      return settle(parked, type);
    // Another set, a member (unpark()) or no longer valid: changed in place
    // through a member, which gives its CPUs back at once. Removing the cgroup
    // and making another would not: 6.1 gives a removed partition's CPUs back
    // only once the cgroup has gone, after rmdir returns, and a partition made
    // meanwhile leaves them in the root cgroup (its kernel threads on them).
    if (!partition || (type != "member" && !knobs_.fs().writeExisting(partitionFile, "member")))
      if (auto gone = removeParked(); !gone) return gone.error();
  }
  if (!state_.createdParked) {
    state_.createdParked = true;  // before it exists: release() and restore() remove it
    if (auto saved = saveState(); !saved) return saved.error();
  }
  if (!knobs_.fs().isDirectory(cgroup))
    if (auto made = knobs_.fs().makeDirectory(cgroup); !made) return made.error();
  // Said once, not retried for this set. The empty cgroup goes; if it will
  // not, it is harmless (no tasks, no partition) and the state file keeps it
  // for release() and restore().
  auto refused = [&](const std::string& why) -> Expected<std::string> {
    parkRefusedFor_ = parked;
    (void)removeParked();
    return "CPUs " + list + " not parked (" + why + "); ";
  };
  if (!knobs_.fs().exists(partitionFile))
    return refused("no cpuset partitions here: the cpuset controller is off or the kernel predates them");
  if (auto written = knobs_.fs().writeExisting(cgroup + "/cpuset.cpus", list); !written)
    return refused("cpuset.cpus: " + written.error().message);
  // "isolated" takes the CPUs out of every scheduler domain; kernels that
  // lack the type take "root" (a domain of their own, still free of tasks).
  std::string taken;
  for (const char* type : {"isolated", "root"}) {
    if (!knobs_.fs().writeExisting(partitionFile, type)) continue;
    auto now = knobs_.fs().readFile(partitionFile);
    if (now && trimmed(*now) == type) {
      taken = type;
      break;
    }
  }
  if (taken.empty()) {
    auto now = knobs_.fs().readFile(partitionFile);
    return refused("the kernel would not make them a partition" + (now ? ": " + trimmed(*now) : std::string{}) +
                   "; another cgroup may hold them");
  }
  parkRefusedFor_.reset();
  return "parked CPUs " + list + " (" + taken + " partition " + kParkedCgroupName + "); " + settle(parked, taken);
}

std::optional<CpuSet> HousekeepingSteering::parkedCpusTheRootStillHas(const CpuSet& parked) const {
  auto text = knobs_.fs().readFile(state_.cgroupRoot + "/cpuset.cpus.effective");
  auto effective = text ? protocol::parseCpuListFile(*text) : Expected<CpuSet>(text.error());
  if (!effective) return std::nullopt;  // cannot tell: taken as given up
  return *effective & parked;
}

std::string HousekeepingSteering::settle(const CpuSet& parked, const std::string& type) {
  const auto kept = parkedCpusTheRootStillHas(parked);
  if (!kept || kept->empty()) {
    retakes_.reset();
    return {};
  }
  // The root cgroup still has parked CPUs although their partition is valid:
  // a partition removed just before (an unfold, a restart) has not gone yet.
  // Making the partition a member and again a partition takes them back.
  if (!retakes_ || retakes_->first != parked) retakes_ = std::pair{parked, 0};
  if (retakes_->second >= kRetakesPerSet) return {};  // said when it gave up
  ++retakes_->second;
  const std::string partitionFile = parkedPartitionFile();
  (void)knobs_.fs().writeExisting(partitionFile, "member");
  (void)knobs_.fs().writeExisting(partitionFile, type);
  const auto after = parkedCpusTheRootStillHas(parked);
  const std::string keptList = protocol::formatCpuList(*kept);
  if (!after || after->empty())
    return "CPUs " + keptList + " taken back from the root cgroup (a partition removed just before had kept them); ";
  if (retakes_->second == kRetakesPerSet)
    return "the root cgroup keeps CPUs " + protocol::formatCpuList(*after) + " although they are parked; left so; ";
  return "the root cgroup still has CPUs " + protocol::formatCpuList(*after) +
         " (a partition removed just before has not gone yet): taken again at the next interval; ";
}

Expected<void> HousekeepingSteering::unpark() {
  // The partition's CPUs go back to the root cgroup at once as it becomes a
  // member; the cgroup stays (with the agent in it, on the same CPUs) for
  // park() to change in place.
  const std::string cgroup = parkedCgroup();
  const std::string partitionFile = parkedPartitionFile();
  if (!state_.createdParked || !knobs_.fs().isDirectory(cgroup)) return {};
  auto partition = knobs_.fs().readFile(partitionFile);
  if (partition && trimmed(*partition) == "member") return {};
  if (partition && knobs_.fs().writeExisting(partitionFile, "member")) return {};
  return removeParked();
}

std::string HousekeepingSteering::parkedCgroup() const { return state_.cgroupRoot + "/" + kParkedCgroupName; }

std::string HousekeepingSteering::parkedPartitionFile() const { return parkedCgroup() + "/cpuset.cpus.partition"; }

Expected<void> HousekeepingSteering::removeParked() {
  const std::string cgroup = parkedCgroup();
  if (state_.createdParked && knobs_.fs().isDirectory(cgroup))
    if (auto removed = removeCgroupMovingTasks(knobs_.fs(), state_.cgroupRoot, cgroup); !removed) return removed;
  if (!state_.createdParked) return {};
  state_.createdParked = false;
  return saveState();
}

Expected<std::string> HousekeepingSteering::steerIrqs(const CpuSet& preferred, MonotonicTime now) {
  const std::string list = protocol::formatCpuList(preferred);
  int steered = 0;
  std::string refusedNow, firstRefusal;
  for (const auto& entry : knobs_.fs().listDirectory(paths::kProcIrqDir)) {
    const auto irq = irqNumber(entry);
    if (!irq || refusedIrqs_.count(*irq)) continue;
    const std::string path = irqAffinityPath(*irq);
    auto current = knobs_.fs().readFile(path);
    if (!current) continue;  // no affinity file: not an IRQ one may steer
    // Already within the preferred CPUs (e.g. an IRQ of CPU 0): nothing runs elsewhere.
    auto cpus = protocol::parseCpuListFile(*current);
    if (cpus && !cpus->empty() && cpus->isSubsetOf(preferred)) continue;
    if (!state_.irqAffinity.count(*irq)) {
      state_.irqAffinity[*irq] = trimmed(*current);
      if (auto saved = saveState(); !saved) return saved.error();
    }
    auto outcome = knobs_.write(path, list, now, KnobValueKind::CpuList);
    if (!outcome) {
      // EIO: a kernel-managed or per-CPU IRQ. It stays as it is, for good.
      // (Any other error, e.g. a read-only /proc/irq in a sandbox, is said
      // the same way, with its reason.)
      refusedIrqs_.insert(*irq);
      state_.irqAffinity.erase(*irq);
      if (auto saved = saveState(); !saved) return saved.error();
      refusedNow += " " + std::to_string(*irq);
      if (firstRefusal.empty()) firstRefusal = outcome.error().message;
      continue;
    }
    if (*outcome == KnobOutcome::Written) ++steered;
  }
  std::string detail;
  if (steered > 0) detail += "IRQs " + std::to_string(steered) + " to CPUs " + list + "; ";
  if (!refusedNow.empty()) detail += "IRQs left as they are, refused:" + refusedNow + " (" + firstRefusal + "); ";
  return detail;
}

Expected<void> HousekeepingSteering::giveIrqsBack() {
  std::optional<Error> firstError;
  for (auto it = state_.irqAffinity.begin(); it != state_.irqAffinity.end();) {
    const std::string path = irqAffinityPath(it->first);
    if (knobs_.fs().exists(path))
      if (auto written = knobs_.fs().writeExisting(path, it->second); !written) {
        if (!firstError) firstError = written.error();
        ++it;
        continue;
      }
    it = state_.irqAffinity.erase(it);
  }
  if (auto saved = saveState(); !saved && !firstError) firstError = saved.error();
  if (firstError) return *firstError;
  return {};
}

Expected<std::string> HousekeepingSteering::steerWorkqueues(const CpuSet& preferred, MonotonicTime now) {
  auto current = knobs_.fs().readFile(paths::kWorkqueueCpumask);
  if (!current) return std::string{};  // no such knob on this kernel
  auto cpus = parseCpuMask(*current);
  if (cpus && *cpus == preferred) return std::string{};
  if (!state_.workqueueMask) {
    state_.workqueueMask = trimmed(*current);
    if (auto saved = saveState(); !saved) return saved.error();
  }
  auto outcome = knobs_.write(paths::kWorkqueueCpumask, formatCpuMask(preferred), now);
  if (!outcome) return "workqueue mask not set (" + outcome.error().message + "); ";
  if (*outcome != KnobOutcome::Written) return std::string{};
  return "unbound workqueues to CPUs " + protocol::formatCpuList(preferred) + "; ";
}

Expected<ApplyResult> HousekeepingSteering::apply(const CpuSet& preferred, const CpuSet& online, MonotonicTime now) {
  if (preferred.empty() || online.isSubsetOf(preferred)) return release();
  ApplyResult result;
  auto parked = park(online - preferred);
  if (!parked) return parked.error().withContext("park CPUs");
  result.detail += *parked;

  const bool irqbalanceBefore = irqbalanceRuns_;
  checkIrqbalance(now);
  if (irqbalanceRuns_) {
    if (!irqbalanceBefore) {
      result.detail += "irqbalance runs: IRQ affinity is left to it (ban the folded CPUs in its "
                       "IRQBALANCE_BANNED_CPULIST, or stop it, for the agent to steer IRQs); ";
      if (auto back = giveIrqsBack(); !back) return back.error().withContext("give IRQs back");
    }
  } else {
    if (irqbalanceBefore) result.detail += "irqbalance stopped: IRQs are steered again; ";
    auto irqs = steerIrqs(preferred, now);
    if (!irqs) return irqs.error().withContext("steer IRQs");
    result.detail += *irqs;
  }

  auto workqueues = steerWorkqueues(preferred, now);
  if (!workqueues) return workqueues.error().withContext("steer workqueues");
  result.detail += *workqueues;
  result.changed = !result.detail.empty();
  return result;
}

Expected<ApplyResult> HousekeepingSteering::release() {
  parkRefusedFor_.reset();
  if (state_.empty()) return ApplyResult{};
  const std::string root = state_.cgroupRoot;
  auto restored = restoreState(knobs_.fs(), state_);
  // On failure the state file still says what is left; keep following it.
  state_ = restored ? State{} : loadState(knobs_.fs()).value_or(State{});
  state_.cgroupRoot = root;
  if (!restored) return restored.error();
  return ApplyResult{true, "housekeeping back as it was (IRQs, workqueue mask, no parked CPUs)"};
}

Expected<void> HousekeepingSteering::restoreState(const RootedFs& fs, const State& state) {
  std::optional<Error> firstError;
  auto note = [&firstError](Expected<void> step) {
    if (!step && !firstError) firstError = step.error();
  };
  // The partition first: its CPUs go back to the root cgroup at once.
  const std::string parked = state.cgroupRoot + "/" + kParkedCgroupName;
  if (state.createdParked && fs.isDirectory(parked)) note(removeCgroupMovingTasks(fs, state.cgroupRoot, parked));
  for (const auto& [irq, affinity] : state.irqAffinity) {
    const std::string path = irqAffinityPath(irq);
    if (fs.exists(path)) note(fs.writeExisting(path, affinity));  // a device removed meanwhile took its IRQ along
  }
  if (state.workqueueMask && fs.exists(paths::kWorkqueueCpumask))
    note(fs.writeExisting(paths::kWorkqueueCpumask, *state.workqueueMask));
  if (firstError) return *firstError;
  if (!fs.exists(paths::kHousekeepingStateFile)) return {};
  return fs.removeFile(paths::kHousekeepingStateFile);
}

Expected<void> HousekeepingSteering::restoreFromState(const RootedFs& fs) {
  auto state = loadState(fs);
  if (!state) {
    // Unreadable: nothing can be undone from it, and keeping it would stop every later start.
    if (fs.exists(paths::kHousekeepingStateFile)) return fs.removeFile(paths::kHousekeepingStateFile);
    return {};
  }
  return restoreState(fs, *state);
}

bool HousekeepingSteering::hasLeftovers(const RootedFs& fs) { return fs.exists(paths::kHousekeepingStateFile); }

}  // namespace vcpufold::agent
