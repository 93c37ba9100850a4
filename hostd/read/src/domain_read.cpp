// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/domain_read.h"

namespace vcpufold::hostd {

DomainReadOutcome keepLastKnown(VmRecord fresh, const DomainReadGaps& gaps, const VmRecord* previous,
                                std::chrono::steady_clock::duration failingFor) {
  DomainReadOutcome out;
  const bool withinHold = failingFor < kLastKnownHold;
  if (gaps.info) {
    if (previous == nullptr) {
      out.notes.push_back("cannot read its vCPU count yet: not counted until it can be");
      return out;
    }
    if (!withinHold) {
      out.notes.push_back("its vCPU count has been unreadable for " +
                          std::to_string(std::chrono::duration_cast<std::chrono::seconds>(failingFor).count()) +
                          " s: dropped, its hint stops");
      return out;
    }
    fresh.vcpus = previous->vcpus;
    fresh.placement = previous->placement;  // read for that count
    out.notes.push_back("cannot read its vCPU count: keeping " + std::to_string(previous->vcpus));
  }
  if (gaps.xml && previous != nullptr && withinHold) {
    fresh.channelSocket = previous->channelSocket;
    fresh.channelProblem = previous->channelProblem;
    fresh.novaFlavor = previous->novaFlavor;
    fresh.partition = previous->partition;
    out.notes.push_back("cannot read its live XML: keeping its channel " +
                        previous->channelSocket.value_or(std::string("(none)")));
  }
  out.record = std::move(fresh);
  return out;
}

bool keepAfterFailedLookup(bool noSuchDomain, std::chrono::steady_clock::duration failingFor) {
  return !noSuchDomain && failingFor < kLastKnownHold;
}

}  // namespace vcpufold::hostd
