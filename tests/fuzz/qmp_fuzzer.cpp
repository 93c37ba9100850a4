// SPDX-License-Identifier: GPL-2.0-or-later
// Fuzzes what a QEMU monitor can answer: one line of QMP, classified, and a
// "return" read as query-cpus-fast. A monitor belongs to a process the guest
// may have compromised.

#include <string>

#include "fuzz_check.h"
#include "vcpufold/hostd/qmp_client.h"

using namespace vcpufold::hostd;
using vcpufold::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string line(vcpufold::fuzz::textOf(data, size));
  const auto message = parseQmpMessage(line);
  if (!message) return 0;
  if (message->kind == QmpMessage::Kind::Return) {
    const auto vcpus = parseQueryCpusJson(message->text);
    if (vcpus) {
      for (std::size_t i = 0; i < vcpus->size(); ++i) {
        check((*vcpus)[i].threadId > 0);
        check((*vcpus)[i].cpuIndex < 4096);
        if (i > 0) check((*vcpus)[i - 1].cpuIndex <= (*vcpus)[i].cpuIndex);
      }
    }
  }
  // Whatever the line, it also reads as query-cpus-fast's answer or fails cleanly.
  (void)parseQueryCpusJson(line);
  return 0;
}
