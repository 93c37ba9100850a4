// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Transports carry frames between agent and host. The agent's loop polls the
// descriptors a transport asks for, hands back their readiness, and receives
// events. Two kinds:
//   VirtioPortTransport  the guest's virtio-serial port (the product)
//   UnixListenTransport  a UNIX socket the agent listens on, one client at a
//                        time, as QEMU's chardev socket behaves (tests, bench)
// Both back off and retry on every failure; neither ever ends the agent.

#include <poll.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vcpufold/common/expected.h"
#include "vcpufold/common/monotonic_clock.h"
#include "vcpufold/common/rooted_fs.h"

namespace vcpufold::agent {

struct TransportEvent {
  enum class Kind { Connected, Data, Disconnected, Note };
  Kind kind;
  std::string text;  // Data: the bytes; Note: a log line (port lost, retrying...)
};

class Transport {
 public:
  virtual ~Transport() = default;
  [[nodiscard]] virtual std::string describe() const = 0;
  [[nodiscard]] virtual bool connected() const = 0;
  // Descriptors to poll now; wakeAt is lowered to the next retry or probe time.
  virtual std::vector<pollfd> pollFds(MonotonicTime now, MonotonicTime& wakeAt) = 0;
  // Handles the polled descriptors (same order as pollFds gave) and due timers.
  virtual void service(const std::vector<pollfd>& polled, MonotonicTime now, std::vector<TransportEvent>& events) = 0;
  // Queues a frame while connected; false when not connected or the queue is full.
  virtual bool send(std::string_view frame) = 0;
  // Sends whatever is queued without waiting longer than timeoutMs (at shutdown).
  virtual void flush(int timeoutMs) = 0;
};

// Where the agent talks to the host, from --port/config: "" finds the virtio
// port named portName in /sys/class/virtio-ports; "unix-listen:PATH" listens
// on a UNIX socket; anything else is a device path.
Expected<std::unique_ptr<Transport>> makeTransport(const RootedFs& fs, const std::string& spec,
                                                   const std::string& portName);

// The /dev path of the virtio port with this name, from sysfs, or an error.
Expected<std::string> findVirtioPort(const RootedFs& fs, const std::string& portName);

}  // namespace vcpufold::agent
