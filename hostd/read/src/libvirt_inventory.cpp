// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/libvirt_inventory.h"

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "vcpufold/common/monotonic_clock.h"
#include "vcpufold/hostd/domain_read.h"
#include "vcpufold/hostd/libvirt_support.h"
#include "vcpufold/hostd/policy_xml.h"
#include "vcpufold/hostd/qemu_threads.h"

namespace vcpufold::hostd {
namespace {

constexpr int kFullRefreshEvery = 30;  // refresh() calls between full re-reads (safety net for lost events)
constexpr int kKeepAliveIntervalS = 5;
constexpr unsigned kKeepAliveCount = 3;

// The VM's CPU time (ns): every thread in its cgroup (vCPUs, QEMU's own
// threads, vhost workers), as libvirt reads it from cgroupfs without a job.
// None where the driver cannot say (the test driver).
std::optional<std::uint64_t> cpuTimeOf(virDomainPtr domain) {
  std::vector<virTypedParameter> params(8);
  const int count = virDomainGetCPUStats(domain, params.data(), static_cast<unsigned>(params.size()), -1, 1, 0);
  if (count < 0) {
    virResetLastError();
    return std::nullopt;
  }
  unsigned long long cpuTime = 0;
  const bool found = virTypedParamsGetULLong(params.data(), count, "cpu_time", &cpuTime) == 1;
  virTypedParamsClear(params.data(), count);
  if (!found) return std::nullopt;
  return cpuTime;
}

// A stats record's numeric fields, by name.
std::vector<std::pair<std::string, std::uint64_t>> numericParams(const virDomainStatsRecord& record) {
  std::vector<std::pair<std::string, std::uint64_t>> params;
  for (int p = 0; p < record.nparams; ++p) {
    const virTypedParameter& param = record.params[p];
    if (param.type == VIR_TYPED_PARAM_ULLONG)
      params.emplace_back(param.field, param.value.ul);
    else if (param.type == VIR_TYPED_PARAM_UINT)
      params.emplace_back(param.field, param.value.ui);
  }
  return params;
}

}  // namespace

struct LibvirtInventory::State {
  virConnectPtr connection = nullptr;
  std::atomic<bool> closed{false};
  std::vector<int> callbacks;
  bool watching = false;  // lifecycle and metadata events are registered
  std::int64_t nextAttemptNs = 0;
  std::int64_t backoffNs = 500'000'000;
  int refreshes = 0;
  std::map<std::string, VmRecord> known;  // by name
  // Since when each domain's reads (a call of readDomain, or its lookup) fail, by name.
  std::map<std::string, std::int64_t> failingSinceNs;
  std::map<std::string, std::string> lastReadNote;  // said once per domain and note
  std::map<std::string, std::string> lastSampleProblem;  // by name: said once per VM and problem
  std::vector<std::string> notes;
  std::mutex dirtyMutex;  // guards the two below (event thread)
  bool dirtyAll = true;
  std::set<std::string> dirtyDomains;
};

namespace {

// Runs in the event thread when the connection drops; refresh() reconnects.
void onClose(virConnectPtr, int, void* opaque) { static_cast<std::atomic<bool>*>(opaque)->store(true); }

}  // namespace

LibvirtInventory::LibvirtInventory(std::string uri, RootedFs fs)
    : uri_(std::move(uri)), fs_(std::move(fs)), state_(std::make_unique<State>()) {
  silenceLibvirtErrors();
}

LibvirtInventory::~LibvirtInventory() { disconnect(); }

bool LibvirtInventory::connected() const { return state_->connection && !state_->closed.load(); }

bool LibvirtInventory::watchingEvents() const { return connected() && state_->watching; }

void LibvirtInventory::startEventLoop() {
  static std::once_flag once;
  std::call_once(once, [] {
    silenceLibvirtErrors();
    virEventRegisterDefaultImpl();
    // The loop lives as long as the process, like libvirt's own event thread in virsh.
    std::thread([] {
      for (;;) virEventRunDefaultImpl();
    }).detach();
  });
}

void LibvirtInventory::disconnect() {
  if (!state_->connection) return;
  for (int id : state_->callbacks) virConnectDomainEventDeregisterAny(state_->connection, id);
  state_->callbacks.clear();
  state_->watching = false;
  virConnectUnregisterCloseCallback(state_->connection, onClose);
  virConnectClose(state_->connection);
  state_->connection = nullptr;
}

Expected<void> LibvirtInventory::ensureConnected() {
  if (state_->connection && state_->closed.load()) disconnect();  // libvirtd restarted or went away
  if (state_->connection) return {};
  const std::int64_t now = monotonicNs();
  if (now < state_->nextAttemptNs) return Error{"libvirt " + uri_ + ": not connected (retrying)"};
  state_->connection = virConnectOpen(uri_.c_str());
  if (!state_->connection) {
    state_->nextAttemptNs = now + state_->backoffNs;
    // libvirtd is local: trying every few seconds costs nothing and finds it back soon.
    state_->backoffNs = std::min<std::int64_t>(state_->backoffNs * 2, 4'000'000'000);
    return libvirtError("cannot connect to " + uri_);
  }
  state_->backoffNs = 500'000'000;
  state_->closed.store(false);
  // A libvirtd that stops answering (hung, or gone without closing the
  // socket) is noticed within about 5 x 3 s: the connection is closed, calls
  // fail instead of waiting, and refresh() reconnects.
  if (virConnectSetKeepAlive(state_->connection, kKeepAliveIntervalS, kKeepAliveCount) < 0)
    virResetLastError();  // a local driver without keepalive (test:///) needs none
  virConnectRegisterCloseCallback(state_->connection, onClose, &state_->closed, nullptr);
  auto* shared = state_.get();
  auto lifecycle = [](virConnectPtr, virDomainPtr, int, int, void* opaque) -> int {
    auto* s = static_cast<State*>(opaque);
    std::lock_guard lock(s->dirtyMutex);
    s->dirtyAll = true;
    return 0;
  };
  auto metadata = [](virConnectPtr, virDomainPtr domain, int, const char*, void* opaque) {
    auto* s = static_cast<State*>(opaque);
    std::lock_guard lock(s->dirtyMutex);
    s->dirtyDomains.insert(virDomainGetName(domain));
  };
  // vcpupin and emulatorpin changes: where the VM may run.
  auto tunable = [](virConnectPtr, virDomainPtr domain, virTypedParameterPtr, int, void* opaque) {
    auto* s = static_cast<State*>(opaque);
    std::lock_guard lock(s->dirtyMutex);
    s->dirtyDomains.insert(virDomainGetName(domain));
  };
  using LifecycleCallback = int (*)(virConnectPtr, virDomainPtr, int, int, void*);
  using MetadataCallback = void (*)(virConnectPtr, virDomainPtr, int, const char*, void*);
  using TunableCallback = void (*)(virConnectPtr, virDomainPtr, virTypedParameterPtr, int, void*);
  const int lifecycleId = virConnectDomainEventRegisterAny(
      state_->connection, nullptr, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
      VIR_DOMAIN_EVENT_CALLBACK(static_cast<LifecycleCallback>(lifecycle)), shared, nullptr);
  const int metadataId = virConnectDomainEventRegisterAny(
      state_->connection, nullptr, VIR_DOMAIN_EVENT_ID_METADATA_CHANGE,
      VIR_DOMAIN_EVENT_CALLBACK(static_cast<MetadataCallback>(metadata)), shared, nullptr);
  const int tunableId = virConnectDomainEventRegisterAny(
      state_->connection, nullptr, VIR_DOMAIN_EVENT_ID_TUNABLE,
      VIR_DOMAIN_EVENT_CALLBACK(static_cast<TunableCallback>(tunable)), shared, nullptr);
  // Without an event loop registration fails; refresh() then re-reads on every
  // call. Without the tunable event a re-pin shows at the next full re-read.
  state_->watching = lifecycleId >= 0 && metadataId >= 0;
  for (int id : {lifecycleId, metadataId, tunableId})
    if (id >= 0) state_->callbacks.push_back(id);
  std::lock_guard lock(state_->dirtyMutex);
  state_->dirtyAll = true;
  return {};
}

namespace {

// Where the domain's vCPUs may run: its QEMU's vCPU threads' affinity when
// this host's /proc shows them, else libvirt's pinning record.
VcpuPlacement readPlacement(virDomainPtr domain, const std::string& name, std::uint32_t vcpus, const RootedFs& fs) {
  if (const auto pid = readLibvirtQemuPid(fs, name))
    if (const auto threads = findQemuVcpuThreads(fs, *pid))
      if (auto affinities = readThreadAffinities(fs, *pid, *threads))
        return placementOf(*affinities, "vCPU threads' affinity");
  const int hostCpus = virNodeGetCPUMap(virDomainGetConnect(domain), nullptr, nullptr, 0);
  if (hostCpus <= 0 || vcpus == 0) {
    virResetLastError();
    return {};
  }
  const int mapLength = VIR_CPU_MAPLEN(hostCpus);
  std::vector<unsigned char> maps(static_cast<std::size_t>(mapLength) * vcpus);
  const int count =
      virDomainGetVcpuPinInfo(domain, static_cast<int>(vcpus), maps.data(), mapLength, VIR_DOMAIN_AFFECT_LIVE);
  if (count <= 0) {
    virResetLastError();
    return {};
  }
  std::vector<protocol::CpuSet> affinities(static_cast<std::size_t>(count));
  for (int vcpu = 0; vcpu < count; ++vcpu)
    for (int cpu = 0; cpu < hostCpus; ++cpu)
      if (VIR_CPU_USABLE(maps.data(), mapLength, vcpu, cpu))
        affinities[static_cast<std::size_t>(vcpu)].insert(static_cast<unsigned>(cpu));
  return placementOf(affinities, "libvirt vcpupin");
}

VmRecord readDomain(virDomainPtr domain, const VmRecord* previous, const RootedFs& fs, DomainReadGaps& gaps) {
  VmRecord out;
  out.name = virDomainGetName(domain);
  char uuid[VIR_UUID_STRING_BUFLEN] = {};
  if (virDomainGetUUIDString(domain, uuid) == 0) out.uuid = uuid;
  virDomainInfo info{};
  if (virDomainGetInfo(domain, &info) == 0)
    out.vcpus = info.nrVirtCpu;
  else
    gaps.info = true;

  if (char* xml = virDomainGetXMLDesc(domain, 0)) {
    auto channel = findHintChannel(xml);
    if (!channel)
      out.channelProblem = channel.error().message;
    else if (*channel)
      out.channelSocket = (*channel)->socketPath;
    const DomainFacts facts = readDomainFacts(xml);
    out.novaFlavor = facts.novaFlavor;
    out.partition = facts.partition;
    free(xml);
  } else {
    out.channelProblem = libvirtError("cannot read the live XML").message;
    gaps.xml = true;
  }

  out.policy = previous ? previous->policy : FoldPolicy{};
  out.policySource = previous ? previous->policySource : PolicySource::Default;
  char* metadata = virDomainGetMetadata(domain, VIR_DOMAIN_METADATA_ELEMENT, kPolicyNamespace, VIR_DOMAIN_AFFECT_LIVE);
  if (metadata) {
    auto policy = parsePolicyXml(metadata);
    if (policy) {
      out.policy = *policy;
      out.policySource = PolicySource::Metadata;
    } else {
      out.policyError = policy.error().message;  // the last valid policy stays
    }
    free(metadata);
  } else if (virGetLastErrorCode() == VIR_ERR_NO_DOMAIN_METADATA) {
    out.policy = FoldPolicy{};
    out.policySource = PolicySource::Default;
  }

  out.placement = readPlacement(domain, out.name, out.vcpus, fs);

  // cpu_shares: cpu.weight on cgroup v2 hosts, cpu.shares on v1 (hostd normalises).
  std::vector<virTypedParameter> params(8);
  int count = static_cast<int>(params.size());
  if (virDomainGetSchedulerParametersFlags(domain, params.data(), &count, VIR_DOMAIN_AFFECT_LIVE) == 0) {
    unsigned long long shares = 0;
    if (virTypedParamsGetULLong(params.data(), count, "cpu_shares", &shares) == 1)
      out.cgroupWeight = static_cast<double>(shares);
    virTypedParamsClear(params.data(), count);
  }
  return out;
}

}  // namespace

Expected<std::vector<VmRecord>> LibvirtInventory::refresh() {
  if (auto connected = ensureConnected(); !connected) return connected.error();
  bool all = false;
  std::set<std::string> dirty;
  {
    std::lock_guard lock(state_->dirtyMutex);
    all = state_->dirtyAll || !state_->watching || ++state_->refreshes % kFullRefreshEvery == 0;
    state_->dirtyAll = false;
    dirty.swap(state_->dirtyDomains);
  }
  const std::int64_t now = monotonicNs();
  const auto failingFor = [this, now](const std::string& name, bool failing) {
    if (!failing) {
      state_->failingSinceNs.erase(name);
      return std::chrono::steady_clock::duration{};
    }
    const std::int64_t since = state_->failingSinceNs.emplace(name, now).first->second;
    return std::chrono::steady_clock::duration(std::chrono::nanoseconds(now - since));
  };
  const auto note = [this](const std::string& name, const std::string& text) {
    if (state_->lastReadNote[name] == text) return;
    state_->lastReadNote[name] = text;
    state_->notes.push_back("libvirt: " + name + ": " + text);
  };
  // One domain read into `into`: a call that failed keeps the last known values for a while.
  const auto read = [&](virDomainPtr domain, const std::string& name, std::map<std::string, VmRecord>& into) {
    const auto previous = state_->known.find(name);
    const VmRecord* before = previous == state_->known.end() ? nullptr : &previous->second;
    DomainReadGaps gaps;
    VmRecord fresh = readDomain(domain, before, fs_, gaps);
    DomainReadOutcome outcome = keepLastKnown(std::move(fresh), gaps, before, failingFor(name, gaps.any()));
    for (const auto& text : outcome.notes) note(name, text);
    if (!gaps.any()) state_->lastReadNote.erase(name);
    if (outcome.record)
      into[name] = std::move(*outcome.record);
    else
      into.erase(name);
  };
  if (all) {
    virDomainPtr* domains = nullptr;
    const int count = virConnectListAllDomains(state_->connection, &domains, VIR_CONNECT_LIST_DOMAINS_ACTIVE);
    if (count < 0) return libvirtError("cannot list domains on " + uri_);
    std::map<std::string, VmRecord> fresh;
    for (int i = 0; i < count; ++i) {
      DomainHandle domain(domains[i]);
      read(domain.get(), virDomainGetName(domain.get()), fresh);
    }
    free(domains);
    // The listing is libvirt's word on which domains run: the others are gone.
    std::erase_if(state_->failingSinceNs, [&fresh](const auto& entry) { return !fresh.count(entry.first); });
    state_->known = std::move(fresh);
  } else {
    for (const auto& name : dirty) {
      DomainHandle domain(virDomainLookupByName(state_->connection, name.c_str()));
      if (!domain) {
        // Gone, or libvirtd could not say this time: only "no such domain" is a fact.
        const bool noSuchDomain = virGetLastErrorCode() == VIR_ERR_NO_DOMAIN;
        if (state_->known.count(name) && keepAfterFailedLookup(noSuchDomain, failingFor(name, !noSuchDomain))) {
          note(name, libvirtError("lookup failed").message + "; keeping its last known record");
          std::lock_guard lock(state_->dirtyMutex);
          state_->dirtyDomains.insert(name);  // asked again at the next refresh
          continue;
        }
        state_->known.erase(name);
        state_->failingSinceNs.erase(name);
        state_->lastReadNote.erase(name);
        continue;
      }
      read(domain.get(), name, state_->known);
    }
  }
  std::vector<VmRecord> result;
  for (const auto& [name, domain] : state_->known) result.push_back(domain);
  return result;
}

Expected<std::map<std::string, VmSample>> LibvirtInventory::sample() {
  if (auto connected = ensureConnected(); !connected) return connected.error();
  // Nothing here waits for QEMU. libvirt's domain statistics
  // (virConnectGetAllDomainStats), for vCPUs and, in libvirt 9.0, even for
  // the CPU time, take a domain job and ask QEMU's monitor, which QEMU's
  // main loop answers: on a contended host that loop can be left unrun for
  // seconds, and one such QEMU held the whole call, every VM's sample, and
  // so every VM's hints. Each VM's vCPU threads' schedstat in /proc gives the
  // vCPU counters, and libvirt's cgroup read (virDomainGetCPUStats, no job)
  // the VM's CPU time.
  virDomainPtr* listed = nullptr;
  const int count = virConnectListAllDomains(state_->connection, &listed, VIR_CONNECT_LIST_DOMAINS_ACTIVE);
  if (count < 0) return libvirtError("cannot list domains on " + uri_);
  std::vector<DomainHandle> domains;
  for (int i = 0; i < count; ++i) domains.emplace_back(listed[i]);
  free(listed);
  std::map<std::string, VmSample> samples;
  std::map<std::string, std::string> problems;  // VMs without a sample, and why
  std::vector<virDomainPtr> fromLibvirt;        // VMs whose vCPU threads this host's /proc does not show
  // Each VM's sample carries the moment its counters were read, not the
  // call's start: the reads before it (other VMs, a cold first read) take a
  // different time in each call, and a rate over the two samples' times would
  // be off by that difference (4% of a full vCPU seen over a 2 s window).
  const auto take = [&](virDomainPtr domain, const std::string& name, std::vector<VcpuCounters> counters,
                        std::int64_t readAt) {
    // A vCPU hot-plug or unplug: the counters show it at once, the record at
    // its next read, which is asked for now (the next refresh, one cycle).
    if (const auto known = state_->known.find(name);
        known != state_->known.end() && known->second.vcpus != counters.size()) {
      std::lock_guard lock(state_->dirtyMutex);
      state_->dirtyDomains.insert(name);
    }
    samples[name] = VmSample{std::move(counters), readAt, cpuTimeOf(domain)};
  };
  for (const auto& domain : domains) {
    const std::string name = virDomainGetName(domain.get());
    auto pid = readLibvirtQemuPid(fs_, name);
    auto counters = pid ? sampleQemuVcpuThreads(fs_, *pid) : Expected<std::vector<VcpuCounters>>(pid.error());
    if (counters) {
      take(domain.get(), name, std::move(*counters), monotonicNs());
      continue;
    }
    problems[name] = counters.error().message;
    fromLibvirt.push_back(domain.get());
  }
  if (!fromLibvirt.empty()) {
    // A libvirt on another host, or a QEMU without named vCPU threads: its
    // vCPU statistics, for those VMs only. NOWAIT skips a domain whose job is
    // taken (a stuck monitor, a migration) instead of waiting for it.
    fromLibvirt.push_back(nullptr);
    virDomainStatsRecordPtr* records = nullptr;
    const int recordCount = virDomainListGetStats(fromLibvirt.data(), VIR_DOMAIN_STATS_VCPU, &records,
                                                  VIR_CONNECT_GET_ALL_DOMAINS_STATS_NOWAIT);
    const std::int64_t statsAt = monotonicNs();
    if (recordCount < 0) virResetLastError();  // each VM keeps its problem from /proc
    for (int i = 0; i < recordCount; ++i) {
      const std::string name = virDomainGetName(records[i]->dom);
      auto counters = vcpuCountersFromStats(numericParams(*records[i]));
      if (!counters) {
        problems[name] += "; libvirt's vCPU statistics: " + counters.error().message;
        continue;
      }
      problems.erase(name);
      take(records[i]->dom, name, std::move(*counters), statsAt);
    }
    virDomainStatsRecordListFree(records);
  }
  // Said once per VM and problem: a VM without samples makes hostd hold its
  // pool's hints and, if it lasts, withdraw them, rather than decide without it.
  std::erase_if(state_->lastSampleProblem, [&](const auto& entry) { return !problems.count(entry.first); });
  for (const auto& [name, problem] : problems) {
    auto& said = state_->lastSampleProblem[name];
    if (said == problem) continue;
    said = problem;
    state_->notes.push_back("libvirt: " + name + ": no vCPU sample: " + problem);
  }
  return samples;
}

std::vector<std::string> LibvirtInventory::takeNotes() { return std::exchange(state_->notes, {}); }

Expected<void> LibvirtInventory::setPolicyXml(const std::string& domain, const std::string& xml) {
  if (auto connected = ensureConnected(); !connected) return connected.error();
  DomainHandle handle(virDomainLookupByName(state_->connection, domain.c_str()));
  if (!handle) return libvirtError("no domain " + domain);
  if (virDomainSetMetadata(handle.get(), VIR_DOMAIN_METADATA_ELEMENT, xml.c_str(), kPolicyKey, kPolicyNamespace,
                           VIR_DOMAIN_AFFECT_LIVE) != 0)
    return libvirtError("cannot set metadata on " + domain);
  return {};
}

}  // namespace vcpufold::hostd
