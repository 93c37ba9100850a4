// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/protocol/cpu_set.h"

namespace vcpufold::protocol {

CpuSet::CpuSet(std::initializer_list<unsigned> cpus) {
  for (unsigned cpu : cpus) insert(cpu);
}

CpuSet CpuSet::range(unsigned first, unsigned last) {
  CpuSet set;
  for (unsigned cpu = first; cpu <= last && cpu < kMaxCpus; ++cpu) set.insert(cpu);
  return set;
}

void CpuSet::insert(unsigned cpu) {
  if (cpu < kMaxCpus) bits_.set(cpu);
}

void CpuSet::erase(unsigned cpu) {
  if (cpu < kMaxCpus) bits_.reset(cpu);
}

bool CpuSet::contains(unsigned cpu) const { return cpu < kMaxCpus && bits_.test(cpu); }

std::optional<unsigned> CpuSet::first() const {
  for (unsigned cpu = 0; cpu < kMaxCpus; ++cpu)
    if (bits_.test(cpu)) return cpu;
  return std::nullopt;
}

std::optional<unsigned> CpuSet::last() const {
  for (unsigned cpu = kMaxCpus; cpu-- > 0;)
    if (bits_.test(cpu)) return cpu;
  return std::nullopt;
}

std::vector<unsigned> CpuSet::toVector() const {
  std::vector<unsigned> cpus;
  cpus.reserve(size());
  for (unsigned cpu = 0; cpu < kMaxCpus; ++cpu)
    if (bits_.test(cpu)) cpus.push_back(cpu);
  return cpus;
}

bool CpuSet::isSubsetOf(const CpuSet& other) const { return (bits_ & ~other.bits_).none(); }

CpuSet CpuSet::operator&(const CpuSet& other) const {
  CpuSet result;
  result.bits_ = bits_ & other.bits_;
  return result;
}

CpuSet CpuSet::operator|(const CpuSet& other) const {
  CpuSet result;
  result.bits_ = bits_ | other.bits_;
  return result;
}

CpuSet CpuSet::operator-(const CpuSet& other) const {
  CpuSet result;
  result.bits_ = bits_ & ~other.bits_;
  return result;
}

}  // namespace vcpufold::protocol
