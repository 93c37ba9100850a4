// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The guest's view of itself that the real vcpufold-agent reads and writes
// (run with --root TREE): the emulated VM publishes TREE/proc/stat (and
// TREE/proc/loadavg, the same runnable count), in which
// each vCPU's steal is its host thread's real run-queue delay (as KVM's steal
// time is), and follows TREE/sys/devices/system/cpu/preferred, the writable
// preferred-CPU file of a patched guest kernel.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vcpufold::bench {

// Run and run-queue wait of one host thread, from /proc/self/task/TID/schedstat.
struct ThreadTimes {
  std::uint64_t runNs = 0;
  std::uint64_t waitNs = 0;
};
ThreadTimes readThreadTimes(long tid);

class GuestTree {
 public:
  GuestTree(std::string root, unsigned vcpus);

  // Rewrites TREE/proc/stat and TREE/proc/loadavg (each atomically: readers
  // never see half a file). procs_running, and loadavg's running count, count
  // the VM's runnable tasks and the reader: in a guest, the agent reading the
  // file is itself running.
  void publishProcStat(const std::vector<ThreadTimes>& vcpus, unsigned runnableTasks) const;

  // The preferred vCPUs as a bit mask: all when the file is empty (the
  // kernel's restore), nothing new when it cannot be read or parsed.
  std::optional<std::uint64_t> readPreferred() const;
  // The file readPreferred reads (for a watch on its writes).
  std::string preferredPath() const;

 private:
  std::string root_;
  unsigned vcpus_;
  std::chrono::steady_clock::time_point booted_;
};

}  // namespace vcpufold::bench
