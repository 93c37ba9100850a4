// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/steal_law.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "fixture_tree.h"
#include "vcpufold/agent/placement.h"
#include "test_time.h"

using namespace vcpufold::agent;
using vcpufold::testing::fixturesDirectory;
using vcpufold::testing::FixtureTree;

namespace {

constexpr long kUserHz = 100;

struct RecordedSample {
  std::int64_t monotonicNs;
  std::string text;
};

std::vector<RecordedSample> loadSequence(const std::string& file) {
  std::ifstream in(fixturesDirectory() / "host-proc-stat-sequence" / file);
  std::vector<RecordedSample> samples;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("@@ monotonic_ns ", 0) == 0)
      samples.push_back({std::stoll(line.substr(16)), {}});
    else if (!samples.empty())
      samples.back().text += line + "\n";
  }
  return samples;
}

// The same /proc/stat with the aggregate steal field replaced.
std::string withSteal(const std::string& text, std::uint64_t stealTicks) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.rfind("cpu ", 0) == 0) {
      std::istringstream fields(line);
      std::vector<std::string> words{std::istream_iterator<std::string>(fields), {}};
      words[8] = std::to_string(stealTicks);
      line.clear();
      for (const auto& word : words) line += (line.empty() ? "" : " ") + word;
    }
    out += line + "\n";
  }
  return out;
}

StealReading reading(const std::string& text, std::int64_t ns) {
  auto sample = vcpufold::parseProcStat(text);
  EXPECT_TRUE(sample) << sample.error().message;
  return stealReadingOf(*sample, vcpufold::MonotonicTime{} + std::chrono::nanoseconds(ns));
}

// Plays the recorded sequence with steal growing by stealBp of the CPUs' time
// per interval, through the law, starting from `cores`; returns cores after each step.
std::vector<std::size_t> play(const std::vector<std::uint32_t>& stealBpPerInterval, std::size_t cores,
                              std::size_t totalCores) {
  const auto samples = loadSequence("samples-busy");
  const StealLawConfig config;
  std::vector<std::size_t> trace;
  std::uint64_t steal = 1000;
  StealReading previous = reading(withSteal(samples[0].text, steal), samples[0].monotonicNs);
  for (std::size_t i = 0; i < stealBpPerInterval.size(); ++i) {
    const auto& sample = samples[(i + 1) % samples.size()];
    const std::int64_t ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(previous.readAt.time_since_epoch()).count() +
        1'000'000'000;  // one interval
    const double cpus = static_cast<double>(previous.cpusReporting);
    steal += static_cast<std::uint64_t>(stealBpPerInterval[i] / 10000.0 * cpus * kUserHz + 0.5);
    const StealReading current = reading(withSteal(sample.text, steal), ns);
    cores = coresAfterStep(stealLawStep(config, stealRatioBp(previous, current, kUserHz)), cores, totalCores);
    trace.push_back(cores);
    previous = current;
  }
  return trace;
}

}  // namespace

TEST(StealReading, RecordedSamplesGiveStealAndOnlineCpus) {
  for (const char* file : {"samples", "samples-busy"}) {
    for (const auto& sample : loadSequence(file)) {
      auto parsed = vcpufold::parseProcStat(sample.text);
      ASSERT_TRUE(parsed) << parsed.error().message;
      const StealReading steal = stealReadingOf(*parsed, at(0) + std::chrono::nanoseconds(sample.monotonicNs));
      EXPECT_EQ(steal.cpusReporting, 2u);
      EXPECT_GE(steal.stealTicks, 214u) << "the host's real steal while recording";
      EXPECT_EQ(std::chrono::nanoseconds(steal.readAt.time_since_epoch()).count(), sample.monotonicNs);
      EXPECT_GE(parsed->procsRunning, 1u);
    }
  }
  ASSERT_EQ(loadSequence("samples").size(), 10u);
}

TEST(StealReading, OfflineCpusDoNotCount) {
  FixtureTree tree("guest-offline-cpus");
  auto parsed = vcpufold::parseProcStat(tree.read("/proc/stat"));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(stealReadingOf(*parsed, at(0)).cpusReporting, 3u) << "possible 0-7, online 0-1,3";
}

TEST(StealLaw, RatioOverOnlineCpus) {
  const auto samples = loadSequence("samples");
  const auto a = reading(withSteal(samples[0].text, 0), 0);
  // 2 CPUs, 1 s: 20 ticks of steal = 10% = 1000 bp.
  const auto b = reading(withSteal(samples[1].text, 20), 1'000'000'000);
  EXPECT_EQ(stealRatioBp(a, b, kUserHz), 1000u);
  // Counter went backwards (reset): no steal, no spike.
  EXPECT_EQ(stealRatioBp(b, a, kUserHz), 0u);
  // No time passed: clamped, never a division by zero.
  EXPECT_EQ(stealRatioBp(a, reading(withSteal(samples[1].text, 20), 0), kUserHz), 10000u);
}

TEST(StealLaw, OfflineCpusDoNotDiluteTheRatio) {
  FixtureTree tree("guest-offline-cpus");  // possible 8, online 3
  const std::string text = tree.read("/proc/stat");
  const auto a = reading(withSteal(text, 0), 0);
  const auto b = reading(withSteal(text, 30), 1'000'000'000);  // 30 ticks over 3 online CPUs in 1 s
  EXPECT_EQ(stealRatioBp(a, b, kUserHz), 1000u) << "divided by 3 online CPUs, not 8 possible";
}

TEST(StealLaw, OneCoreOffPerIntervalAboveHigh) {
  EXPECT_EQ(play({2000, 2000, 2000}, 4, 4), (std::vector<std::size_t>{3, 2, 1}));
  // With 2 CPUs one tick is 50 bp: 550 is the first level above the 500 threshold.
  EXPECT_EQ(play({550, 550}, 4, 4), (std::vector<std::size_t>{3, 2}));
}

TEST(StealLaw, NeverBelowOneCore) {
  EXPECT_EQ(play({9000, 9000, 9000, 9000, 9000, 9000}, 4, 4), (std::vector<std::size_t>{3, 2, 1, 1, 1, 1}));
}

TEST(StealLaw, OneCoreBackAtOrBelowLow) {
  EXPECT_EQ(play({0, 200, 100, 0}, 1, 4), (std::vector<std::size_t>{2, 3, 4, 4}));
}

TEST(StealLaw, NothingInBetween) {
  EXPECT_EQ(play({250, 300, 450, 500}, 2, 4), (std::vector<std::size_t>{2, 2, 2, 2}));
}

TEST(StealLaw, StepAlongThePlacementOrder) {
  FixtureTree tree("guest-smt2-numa2");
  const PlacementPlan plan(*readTopology(tree.fs()));
  std::size_t cores = plan.coreCount();
  cores = coresAfterStep(FoldStep::FoldOneCore, cores, plan.coreCount());
  EXPECT_EQ(plan.forCores(cores).size(), 6u) << "a whole SMT core (2 CPUs) per step";
}
