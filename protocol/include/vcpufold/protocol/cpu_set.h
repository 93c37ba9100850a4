// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// CpuSet: a set of CPU numbers 0..kMaxCpus-1 with value semantics.
// Used for vCPU masks on the wire and in the guest's placement decisions.
// Stored as 64-bit words up to the highest CPU in the set, not as a bitset
// of kMaxCpus: hostd copies several sets per VM into every decision's report,
// and at a thousand VMs fixed 512-byte sets made each report megabytes.
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

  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] bool empty() const { return words_.empty(); }
  [[nodiscard]] std::optional<unsigned> first() const;
  [[nodiscard]] std::optional<unsigned> last() const;
  [[nodiscard]] std::vector<unsigned> toVector() const;

  [[nodiscard]] bool isSubsetOf(const CpuSet& other) const;
  [[nodiscard]] CpuSet operator&(const CpuSet& other) const;
  [[nodiscard]] CpuSet operator|(const CpuSet& other) const;
  [[nodiscard]] CpuSet operator-(const CpuSet& other) const;  // set difference

  // Equal sets have equal words: no word past the highest CPU is kept.
  friend bool operator==(const CpuSet&, const CpuSet&) = default;

 private:
  void dropTrailingEmptyWords();

  std::vector<std::uint64_t> words_;  // bit b of word w: CPU 64 * w + b
};

}  // namespace vcpufold::protocol
