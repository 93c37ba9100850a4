// SPDX-License-Identifier: GPL-2.0-or-later
// Fuzzes the readers of /proc and /sys text (the first byte picks: 's' or 'h'
// /proc/stat, read alike by the agent and hostd, 't' a thread's schedstat,
// 'a' a thread's status (its affinity), 'c' a sysfs CPU list). A guest's own kernel, or a fixture,
// writes these; they must never crash a daemon.

#include "fuzz_check.h"
#include "vcpufold/common/proc_stat.h"
#include "vcpufold/hostd/cpu_pool.h"
#include "vcpufold/hostd/qemu_threads.h"
#include "vcpufold/hostd/vcpu_sample.h"
#include "vcpufold/protocol/cpulist.h"

using vcpufold::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto text = vcpufold::fuzz::textOf(data + 1, size - 1);
  switch (data[0]) {
    case 's':
    case 'h':
      if (const auto stat = vcpufold::parseProcStat(text)) {
        check(stat->all.busy <= stat->all.total && !stat->perCpu.empty());
        for (const auto& [cpu, t] : stat->perCpu) check(t.busy <= t.total && t.steal <= t.total);
      }
      break;
    case 't':
      (void)vcpufold::hostd::parseSchedstat(text);
      break;
    case 'a':
      if (const auto cpus = vcpufold::hostd::parseCpusAllowedList(text)) check(!cpus->empty());
      break;
    default:
      if (const auto cpus = vcpufold::protocol::parseCpuListFile(text)) {
        const auto again = vcpufold::protocol::parseCpuListFile(vcpufold::protocol::formatCpuList(*cpus) + "\n");
        check(again.ok() && *again == *cpus);
      }
      break;
  }
  return 0;
}
