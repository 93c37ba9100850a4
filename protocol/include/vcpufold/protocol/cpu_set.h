// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// CpuSet: a set of CPU numbers 0..kMaxCpus-1 with value semantics.
// Used for vCPU masks on the wire and in the guest's placement decisions.

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

namespace vcpufold::protocol {

// Matches the largest vCPU count the protocol accepts (hint.vcpus <= 4096).
inline constexpr std::size_t kMaxCpus = 4096;

class CpuSet {
 public:
  CpuSet() = default;
  CpuSet(std::initializer_list<unsigned> cpus);
  static CpuSet range(unsigned first, unsigned last);  // inclusive; empty if first > last

  // Out-of-range CPU numbers are ignored by insert and never contained.
  void insert(unsigned cpu);
  void erase(unsigned cpu);
  [[nodiscard]] bool contains(unsigned cpu) const;

  [[nodiscard]] std::size_t size() const { return bits_.count(); }
  [[nodiscard]] bool empty() const { return bits_.none(); }
  [[nodiscard]] std::optional<unsigned> first() const;
  [[nodiscard]] std::optional<unsigned> last() const;
  [[nodiscard]] std::vector<unsigned> toVector() const;

  [[nodiscard]] bool isSubsetOf(const CpuSet& other) const;
  [[nodiscard]] CpuSet operator&(const CpuSet& other) const;
  [[nodiscard]] CpuSet operator|(const CpuSet& other) const;
  [[nodiscard]] CpuSet operator-(const CpuSet& other) const;  // set difference

  friend bool operator==(const CpuSet&, const CpuSet&) = default;

 private:
  std::bitset<kMaxCpus> bits_;
};

}  // namespace vcpufold::protocol
