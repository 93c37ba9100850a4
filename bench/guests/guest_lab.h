// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The real guests of vcpufold-bench-guests: TCG guests under libvirt
// (qemu:///system, tests/lab/libvirt/guests.sh, payload
// tests/lab/guest/guests-bench.sh) with the real vcpufold-agent and hackbench,
// reached through their lab control ports. The guests go when this object
// does, however the run ends short of SIGKILL (the next run's start removes
// what a killed one left).

#include <memory>
#include <string>
#include <vector>

#include "guest_control.h"

namespace vcpufold::bench {

struct GuestLabSpec {
  std::vector<std::string> names;  // libvirt domain names (vcpufold-bench-*, which lab cleanup knows)
  std::string agentBinary;
  std::string hackbenchBinary;
  std::string kernel;         // a guest kernel image; empty: the Debian cloud kernel of the lab image
  std::string cloudKernel;    // that Debian kernel's meta package; empty: linux-image-cloud-amd64 (6.1)
  std::string cpuset;         // host CPUs the guests may run on ("0-1"); empty: any
  std::string kernelArgs;     // appended to the guests' kernel command line (e.g. "mitigations=off")
  // How the payload starts the agents (agentStartCommand); empty: none
  // (hostd alone).
  std::string agentStartCommand = "sh /lab/agent start";
  unsigned vcpus = 4;
  unsigned memoryMiB = 256;
};

class GuestLab {
 public:
  // Defines and starts the guests and waits until each answers (throws, with
  // the reason, when one does not).
  explicit GuestLab(GuestLabSpec spec);
  ~GuestLab();
  GuestLab(const GuestLab&) = delete;
  GuestLab& operator=(const GuestLab&) = delete;

  const std::vector<std::string>& names() const { return spec_.names; }
  bool runsAgents() const { return !spec_.agentStartCommand.empty(); }
  // Runs a shell command in guest `index`; throws when it does not answer.
  std::string run(std::size_t index, const std::string& command, int timeoutMs = 60'000);
  std::string kernelRelease();

  // The agents in every guest (fold = "always", otherwise at their defaults, with the spec's actuator), or none: stopping one unfolds
  // its guest, which is checked (throws when a guest stays folded).
  void startAgents();
  void stopAgents();
  // Sets every guest's vcpufold policy (libvirt metadata, live), e.g.
  // <policy mode="fixed" vcpus="1"/>.
  void setPolicy(const std::string& policyElement);
  // The actuator each agent chose at its last start ("cpuset", "kernel",
  // "none"), from its log.
  std::vector<std::string> actuatorsInUse();

  // Starts `workload` in every guest at once, waits until every guest has
  // ended `units` units (each keeps loading its guest until then), stops them
  // and returns each guest's unit log. With `where`, also what ran on each
  // guest's vCPUs from the start to the end of the wait (`/lab/where diff`
  // output, a text per guest; left empty, with a line on stderr, when a
  // guest does not answer its snapshot: the measurement stands).
  std::vector<std::string> runWorkload(const std::string& workload, unsigned size, unsigned units, int timeoutMs,
                                       std::vector<std::string>* where = nullptr);
  // Runs `command` in every guest at once (each on its own control port);
  // their outputs in guest order. Throws with the first failure.
  std::vector<std::string> onEveryGuest(const std::string& command, int timeoutMs);

 private:
  void stop();

  GuestLabSpec spec_;
  std::vector<std::unique_ptr<testing::GuestControl>> controls_;
};

}  // namespace vcpufold::bench
