// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// LibvirtInventory: VMs from libvirt (qemu:///system by default). One
// connection; lifecycle and metadata-change events mark what to re-read;
// each tick samples every VM's vCPU threads from /proc (their QEMU's pid from
// libvirt's pid file) and its CPU time from libvirt's cgroup read
// (virDomainGetCPUStats), neither of which waits for QEMU. When libvirtd goes away the connection is dropped and
// reopened with backoff. Every libvirt error is caught here and turned into Error with context; nothing is printed on
// stderr by libvirt itself.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vcpufold/common/expected.h"
#include "vcpufold/common/rooted_fs.h"
#include "vcpufold/hostd/domain_xml.h"
#include "vcpufold/hostd/inventory.h"
#include "vcpufold/hostd/policy.h"
#include "vcpufold/hostd/vcpu_sample.h"

namespace vcpufold::hostd {


class LibvirtInventory final : public Inventory {
 public:
  // Connects lazily; uri as for virsh -c. fs: where /proc and /run are, for
  // sampling vCPU threads' schedstat and reading where they may run.
  explicit LibvirtInventory(std::string uri, RootedFs fs = RootedFs("/"));
  ~LibvirtInventory() override;
  LibvirtInventory(const LibvirtInventory&) = delete;
  LibvirtInventory& operator=(const LibvirtInventory&) = delete;

  [[nodiscard]] std::string describe() const override { return "libvirt " + uri_; }
  [[nodiscard]] bool connected() const;
  // Lifecycle and metadata-change events are registered (an event loop runs);
  // without them every refresh() re-reads every domain.
  [[nodiscard]] bool watchingEvents() const;

  // Running domains with channel, policy and weight. Re-reads a domain only
  // when it is new or an event (lifecycle, metadata change) marked it, and
  // everything every `fullRefreshTicks` calls; reconnects first if needed.
  Expected<std::vector<VmRecord>> refresh() override;
  // vCPU counters of every running domain, by name: run time and run-queue
  // delay from its QEMU's vCPU threads' schedstat, and the VM's CPU time from
  // libvirt's cgroup read. Neither asks QEMU's monitor, so a QEMU whose main loop
  // does not run delays no VM's sample. A domain whose vCPU threads this
  // host's /proc does not show is sampled through libvirt's vCPU statistics
  // (which do ask the monitor; NOWAIT), and a domain with neither has no
  // sample, said once per problem.
  Expected<std::map<std::string, VmSample>> sample() override;
  std::vector<std::string> takeNotes() override;

  // Lets libvirt deliver pending events (the event loop runs in its own thread).
  static void startEventLoop();

  // For tests and tools: set a domain's policy metadata (live).
  Expected<void> setPolicyXml(const std::string& domain, const std::string& xml);

 private:
  struct State;
  Expected<void> ensureConnected();
  void disconnect();

  std::string uri_;
  RootedFs fs_;
  std::unique_ptr<State> state_;
};

}  // namespace vcpufold::hostd
