// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/protocol/cpu_set.h"

#include <algorithm>
#include <bit>

namespace vcpufold::protocol {

namespace {

constexpr unsigned kWordBits = 64;

}  // namespace

CpuSet::CpuSet(std::initializer_list<unsigned> cpus) {
  for (unsigned cpu : cpus) insert(cpu);
}

CpuSet CpuSet::range(unsigned first, unsigned last) {
  CpuSet set;
  if (first > last || first >= kMaxCpus) return set;
  last = std::min<unsigned>(last, kMaxCpus - 1);
  set.words_.assign(last / kWordBits + 1, 0);
  for (unsigned word = first / kWordBits; word <= last / kWordBits; ++word) {
    const unsigned low = word == first / kWordBits ? first % kWordBits : 0;
    const unsigned high = word == last / kWordBits ? last % kWordBits : kWordBits - 1;
    const std::uint64_t upTo = high == kWordBits - 1 ? ~std::uint64_t{0} : (std::uint64_t{1} << (high + 1)) - 1;
    set.words_[word] = upTo & ~((std::uint64_t{1} << low) - 1);
  }
  return set;
}

void CpuSet::insert(unsigned cpu) {
  if (cpu >= kMaxCpus) return;
  if (cpu / kWordBits >= words_.size()) words_.resize(cpu / kWordBits + 1, 0);
  words_[cpu / kWordBits] |= std::uint64_t{1} << (cpu % kWordBits);
}

void CpuSet::erase(unsigned cpu) {
  if (cpu / kWordBits >= words_.size()) return;
  words_[cpu / kWordBits] &= ~(std::uint64_t{1} << (cpu % kWordBits));
  dropTrailingEmptyWords();
}

bool CpuSet::contains(unsigned cpu) const {
  return cpu / kWordBits < words_.size() && (words_[cpu / kWordBits] >> (cpu % kWordBits)) & 1U;
}

std::size_t CpuSet::size() const {
  std::size_t count = 0;
  for (std::uint64_t word : words_) count += static_cast<std::size_t>(std::popcount(word));
  return count;
}

std::optional<unsigned> CpuSet::first() const {
  for (std::size_t word = 0; word < words_.size(); ++word)
    if (words_[word])
      return static_cast<unsigned>(word * kWordBits) + static_cast<unsigned>(std::countr_zero(words_[word]));
  return std::nullopt;
}

std::optional<unsigned> CpuSet::last() const {
  if (words_.empty()) return std::nullopt;  // otherwise the last word is not empty
  const std::size_t word = words_.size() - 1;
  return static_cast<unsigned>(word * kWordBits) +
         (kWordBits - 1 - static_cast<unsigned>(std::countl_zero(words_[word])));
}

std::vector<unsigned> CpuSet::toVector() const {
  std::vector<unsigned> cpus;
  cpus.reserve(size());
  for (std::size_t word = 0; word < words_.size(); ++word)
    for (std::uint64_t bits = words_[word]; bits; bits &= bits - 1)
      cpus.push_back(static_cast<unsigned>(word * kWordBits) + static_cast<unsigned>(std::countr_zero(bits)));
  return cpus;
}

bool CpuSet::isSubsetOf(const CpuSet& other) const {
  for (std::size_t word = 0; word < words_.size(); ++word) {
    const std::uint64_t theirs = word < other.words_.size() ? other.words_[word] : 0;
    if (words_[word] & ~theirs) return false;
  }
  return true;
}

CpuSet CpuSet::operator&(const CpuSet& other) const {
  CpuSet result;
  result.words_.resize(std::min(words_.size(), other.words_.size()));
  for (std::size_t word = 0; word < result.words_.size(); ++word)
    result.words_[word] = words_[word] & other.words_[word];
  result.dropTrailingEmptyWords();
  return result;
}

CpuSet CpuSet::operator|(const CpuSet& other) const {
  CpuSet result = words_.size() >= other.words_.size() ? *this : other;
  const CpuSet& shorter = words_.size() >= other.words_.size() ? other : *this;
  for (std::size_t word = 0; word < shorter.words_.size(); ++word) result.words_[word] |= shorter.words_[word];
  return result;
}

CpuSet CpuSet::operator-(const CpuSet& other) const {
  CpuSet result = *this;
  for (std::size_t word = 0; word < std::min(words_.size(), other.words_.size()); ++word)
    result.words_[word] &= ~other.words_[word];
  result.dropTrailingEmptyWords();
  return result;
}

void CpuSet::dropTrailingEmptyWords() {
  while (!words_.empty() && words_.back() == 0) words_.pop_back();
}

}  // namespace vcpufold::protocol
