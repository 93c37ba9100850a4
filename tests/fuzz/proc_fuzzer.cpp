// Fuzzes the readers of /proc and /sys text (the first byte picks: 's' the
// agent's /proc/stat, 'h' hostd's per-CPU /proc/stat, 't' a thread's
// schedstat, 'c' a sysfs CPU list). A guest's own kernel, or a fixture,
// writes these; they must never crash a daemon.

#include "fuzz_check.h"
#include "vcpufold/agent/proc_stat.h"
#include "vcpufold/hostd/cpu_pool.h"
#include "vcpufold/hostd/vcpu_sample.h"
#include "vcpufold/protocol/cpulist.h"

using vcpufold::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto text = vcpufold::fuzz::textOf(data + 1, size - 1);
  switch (data[0]) {
    case 's':
      (void)vcpufold::agent::parseProcStat(text);
      break;
    case 'h':
      if (const auto ticks = vcpufold::hostd::parsePerCpuTicks(text))
        for (const auto& [cpu, t] : *ticks) check(t.busy <= t.total);
      break;
    case 't':
      (void)vcpufold::hostd::parseSchedstat(text);
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
