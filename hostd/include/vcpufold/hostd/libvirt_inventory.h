#pragma once
// LibvirtInventory: VMs from libvirt (qemu:///system by default). One
// connection; lifecycle and metadata-change events mark what to re-read; one
// virConnectGetAllDomainStats call per tick samples every VM's vCPUs. When
// libvirtd goes away the connection is dropped and reopened with backoff.
// Every libvirt error is caught here and turned into Error with context;
// nothing is printed on stderr by libvirt itself.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vcpufold/common/expected.h"
#include "vcpufold/hostd/domain_xml.h"
#include "vcpufold/hostd/policy.h"
#include "vcpufold/hostd/vcpu_sample.h"

namespace vcpufold::hostd {

struct LibvirtDomain {
  std::string name;
  std::string uuid;
  std::uint32_t vcpus = 0;
  std::optional<DomainChannel> channel;
  std::optional<std::string> channelError;  // the channel exists but cannot be used, and why
  FoldPolicy policy;                         // last valid policy (default when none set)
  std::optional<std::string> policyError;    // the current metadata is malformed, and why
  std::optional<double> weight;              // the VM cgroup's weight on the cpu.weight scale
};

class LibvirtInventory {
 public:
  // Connects lazily; uri as for virsh -c.
  explicit LibvirtInventory(std::string uri);
  ~LibvirtInventory();
  LibvirtInventory(const LibvirtInventory&) = delete;
  LibvirtInventory& operator=(const LibvirtInventory&) = delete;

  [[nodiscard]] const std::string& uri() const { return uri_; }
  [[nodiscard]] bool connected() const;
  // Lifecycle and metadata-change events are registered (an event loop runs);
  // without them every refresh() re-reads every domain.
  [[nodiscard]] bool watchingEvents() const;

  // Running domains with channel, policy and weight. Re-reads a domain only
  // when it is new or an event (lifecycle, metadata change) marked it, and
  // everything every `fullRefreshTicks` calls; reconnects first if needed.
  Expected<std::vector<LibvirtDomain>> refresh();
  // vCPU counters of every running domain, by name, in one call.
  Expected<std::map<std::string, VmSample>> sample();

  // Lets libvirt deliver pending events (the event loop runs in its own thread).
  static void startEventLoop();

  // For tests and tools: set a domain's policy metadata (live).
  Expected<void> setPolicyXml(const std::string& domain, const std::string& xml);

 private:
  struct State;
  Expected<void> ensureConnected();
  void disconnect();

  std::string uri_;
  std::unique_ptr<State> state_;
};

}  // namespace vcpufold::hostd
