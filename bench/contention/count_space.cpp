// SPDX-License-Identifier: GPL-2.0-or-later
#include "count_space.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

namespace vcpufold::bench {

namespace {

constexpr double kMinimumGain = 1.03;

// VMs whose class and range agree are interchangeable; the key keeps a caller's
// class with mixed ranges from being sorted across them.
using ClassKey = std::tuple<unsigned, unsigned, unsigned>;
ClassKey classOf(const CountRange& range) { return {range.symmetryClass, range.low, range.high}; }

// Multisets of size k over r values, saturating above cap.
std::size_t multisets(std::size_t r, std::size_t k, std::size_t cap) {
  // C(r + k - 1, k), built up one factor at a time; each partial product is itself a binomial.
  long double value = 1;
  for (std::size_t i = 1; i <= k; ++i) {
    value = value * static_cast<long double>(r + i - 1) / static_cast<long double>(i);
    if (value > static_cast<long double>(cap)) return cap + 1;
  }
  return static_cast<std::size_t>(value + 0.5L);
}

class Searcher {
 public:
  Searcher(const std::vector<CountRange>& space, const MeasureCounts& measure) : space_(space), measure_(measure) {}

  std::optional<double> rateOf(const std::vector<unsigned>& counts, unsigned& budget) {
    if (auto known = measured_.find(counts); known != measured_.end()) return known->second;
    if (budget == 0) return std::nullopt;
    --budget;
    ++measurements_;
    return measured_[counts] = measure_(counts);
  }

  std::vector<std::vector<unsigned>> moves(const std::vector<unsigned>& counts) const {
    std::set<std::vector<unsigned>> result;
    for (std::size_t i = 0; i < space_.size(); ++i) {
      const CountRange& range = space_[i];
      if (range.low == range.high) continue;
      std::set<unsigned> next{counts[i] + 1, counts[i] - 1};
      if (range.bigSteps) next.insert({counts[i] * 2, (counts[i] + 1) / 2});
      for (unsigned count : next) {
        if (count < range.low || count > range.high || count == counts[i]) continue;
        auto moved = counts;
        moved[i] = count;
        result.insert(canonical(space_, moved));
      }
    }
    result.erase(counts);
    return {result.begin(), result.end()};
  }

  // Coordinate descent; returns where it ended (nothing when even the start
  // could not be measured) and whether it stopped for want of budget.
  std::optional<std::pair<std::vector<unsigned>, double>> descend(std::vector<unsigned> current, unsigned& budget,
                                                                  bool& outOfBudget) {
    const auto startRate = rateOf(current, budget);
    if (!startRate) {
      outOfBudget = true;
      return std::nullopt;
    }
    double rate = *startRate;
    for (;;) {
      std::vector<unsigned> bestMove;
      double bestMoveRate = 0;
      bool stopped = false;
      for (const auto& candidate : moves(current)) {
        const auto candidateRate = rateOf(candidate, budget);
        if (!candidateRate) {
          stopped = true;
          break;
        }
        if (*candidateRate > bestMoveRate) {
          bestMoveRate = *candidateRate;
          bestMove = candidate;
        }
      }
      outOfBudget = outOfBudget || stopped;
      if (!bestMove.empty() && bestMoveRate > rate * kMinimumGain) {
        current = bestMove;
        rate = bestMoveRate;
        if (!stopped) continue;
      }
      return std::make_pair(current, rate);
    }
  }

  unsigned measurements() const { return measurements_; }
  const std::map<std::vector<unsigned>, double>& measured() const { return measured_; }

 private:
  const std::vector<CountRange>& space_;
  const MeasureCounts& measure_;
  std::map<std::vector<unsigned>, double> measured_;
  unsigned measurements_ = 0;
};

void enumerateFrom(const std::vector<CountRange>& space, std::size_t position, std::vector<unsigned>& counts,
                   std::vector<std::vector<unsigned>>& out) {
  if (position == space.size()) {
    out.push_back(counts);
    return;
  }
  const CountRange& range = space[position];
  unsigned high = range.high;
  // Non-increasing within a class: bounded by the class's previous VM.
  for (std::size_t before = position; before-- > 0;)
    if (classOf(space[before]) == classOf(range)) {
      high = std::min(high, counts[before]);
      break;
    }
  for (unsigned count = range.low; count <= high; ++count) {
    counts[position] = count;
    enumerateFrom(space, position + 1, counts, out);
  }
}

}  // namespace

std::size_t distinctAssignments(const std::vector<CountRange>& space, std::size_t cap) {
  std::map<ClassKey, std::size_t> members;
  for (const auto& range : space) ++members[classOf(range)];
  std::size_t total = 1;
  for (const auto& [key, size] : members) {
    const std::size_t values = std::get<2>(key) - std::get<1>(key) + 1;
    const std::size_t ways = multisets(values, size, cap);
    if (ways > cap || total > cap / std::max<std::size_t>(ways, 1)) return cap + 1;
    total *= ways;
    if (total > cap) return cap + 1;
  }
  return total;
}

std::vector<std::vector<unsigned>> enumerateAssignments(const std::vector<CountRange>& space) {
  for (const auto& range : space)
    if (range.low > range.high) throw std::invalid_argument("a count range is empty");
  std::vector<std::vector<unsigned>> result;
  std::vector<unsigned> counts(space.size(), 0);
  enumerateFrom(space, 0, counts, result);
  return result;
}

std::vector<unsigned> canonical(const std::vector<CountRange>& space, std::vector<unsigned> counts) {
  std::map<ClassKey, std::vector<std::size_t>> positions;
  for (std::size_t i = 0; i < space.size(); ++i) positions[classOf(space[i])].push_back(i);
  for (const auto& [key, where] : positions) {
    if (where.size() < 2) continue;
    std::vector<unsigned> values;
    for (auto i : where) values.push_back(counts[i]);
    std::sort(values.begin(), values.end(), std::greater<>());
    for (std::size_t k = 0; k < where.size(); ++k) counts[where[k]] = values[k];
  }
  return counts;
}

std::vector<unsigned> clampedInto(const std::vector<CountRange>& space, std::vector<unsigned> counts) {
  counts.resize(space.size(), 1);
  for (std::size_t i = 0; i < space.size(); ++i) counts[i] = std::clamp(counts[i], space[i].low, space[i].high);
  return counts;
}

CountSearch searchCounts(const std::vector<CountRange>& space, const std::vector<std::vector<unsigned>>& starts,
                         const MeasureCounts& measure, unsigned maxMeasurements, std::size_t exhaustiveLimit) {
  if (starts.empty()) throw std::invalid_argument("a count search needs a start");
  Searcher searcher(space, measure);
  CountSearch search;
  unsigned budget = maxMeasurements;
  const std::size_t size = distinctAssignments(space, exhaustiveLimit);
  const auto first = canonical(space, clampedInto(space, starts.front()));
  if (size <= exhaustiveLimit && size <= maxMeasurements) {
    search.exhaustive = true;
    for (const auto& counts : enumerateAssignments(space)) searcher.rateOf(counts, budget);
    // The descent of earlier versions, replayed over what was measured: free.
    bool unused = false;
    if (auto end = searcher.descend(first, budget, unused)) std::tie(search.descentEnd, search.descentRate) = *end;
  } else {
    std::set<std::vector<unsigned>> tried;
    for (std::size_t i = 0; i < starts.size(); ++i) {
      const auto start = canonical(space, clampedInto(space, starts[i]));
      if (!tried.insert(start).second) continue;
      // Each start gets an equal share of what is left.
      unsigned share = budget / static_cast<unsigned>(starts.size() - i);
      if (share == 0) share = budget;
      const unsigned before = share;
      bool outOfBudget = false;
      const auto end = searcher.descend(start, share, outOfBudget);
      budget -= before - share;
      search.budgetSpent = search.budgetSpent || outOfBudget;
      if (i == 0 && end) std::tie(search.descentEnd, search.descentRate) = *end;
    }
  }
  search.measurements = searcher.measurements();
  for (const auto& [counts, rate] : searcher.measured()) search.ranked.emplace_back(counts, rate);
  std::stable_sort(search.ranked.begin(), search.ranked.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (!search.ranked.empty()) std::tie(search.best, search.bestRate) = search.ranked.front();
  return search;
}

}  // namespace vcpufold::bench
