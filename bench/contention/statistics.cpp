// SPDX-License-Identifier: GPL-2.0-or-later
#include "statistics.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>

namespace vcpufold::bench {

namespace {

constexpr std::uint32_t kSeed = 20261201;

std::vector<double> resampledMedians(const std::vector<double>& values, unsigned resamples, std::mt19937& random) {
  std::vector<double> medians;
  std::uniform_int_distribution<std::size_t> pick(0, values.size() - 1);
  std::vector<double> draw(values.size());
  for (unsigned r = 0; r < resamples; ++r) {
    for (auto& value : draw) value = values[pick(random)];
    medians.push_back(median(draw));
  }
  return medians;
}

Estimate fromDistribution(double point, std::vector<double> distribution, unsigned samples) {
  std::sort(distribution.begin(), distribution.end());
  const auto at = [&](double quantile) {
    const auto index = static_cast<std::size_t>(quantile * static_cast<double>(distribution.size() - 1) + 0.5);
    return distribution[index];
  };
  return {point, at(0.025), at(0.975), samples};
}

}  // namespace

std::string ratioText(const Estimate& estimate) {
  const auto two = [](double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f", value);
    return std::string(text);
  };
  if (estimate.samples == 0) return "-";
  if (estimate.samples < 2) return two(estimate.median) + " (one run)";
  return two(estimate.median) + " [" + two(estimate.low) + ", " + two(estimate.high) + "]";
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

Estimate estimateMedian(const std::vector<double>& values, unsigned resamples) {
  if (values.size() < 2) {
    const double point = median(values);
    return {point, point, point, static_cast<unsigned>(values.size())};
  }
  std::mt19937 random(kSeed);
  return fromDistribution(median(values), resampledMedians(values, resamples, random),
                          static_cast<unsigned>(values.size()));
}

Estimate estimateRatio(const std::vector<double>& a, const std::vector<double>& b, unsigned resamples) {
  const double below = median(b);
  const double point = below > 0 ? median(a) / below : 0;
  const auto samples = static_cast<unsigned>(std::min(a.size(), b.size()));
  if (a.size() < 2 || b.size() < 2) return {point, point, point, samples};
  std::mt19937 random(kSeed);
  const auto top = resampledMedians(a, resamples, random);
  const auto bottom = resampledMedians(b, resamples, random);
  std::vector<double> ratios;
  for (unsigned r = 0; r < resamples; ++r) ratios.push_back(bottom[r] > 0 ? top[r] / bottom[r] : 0);
  return fromDistribution(point, ratios, samples);
}

Estimate estimatePairedRatio(const std::vector<double>& a, const std::vector<double>& b, unsigned resamples) {
  std::vector<double> ratios;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    if (a[i] > 0 && b[i] > 0) ratios.push_back(a[i] / b[i]);
  return estimateMedian(ratios, resamples);
}

Estimate estimatePairedRatio(const std::map<unsigned, double>& a, const std::map<unsigned, double>& b,
                             unsigned resamples) {
  std::vector<double> top, bottom;
  for (const auto& [repetition, value] : a)
    if (const auto other = b.find(repetition); other != b.end()) {
      top.push_back(value);
      bottom.push_back(other->second);
    }
  return estimatePairedRatio(top, bottom, resamples);
}

Verdict judgeAtLeast(const Estimate& estimate, double target) {
  if (estimate.samples < 2) return Verdict::NotShown;
  if (estimate.low >= target) return Verdict::Met;
  if (estimate.high < target) return Verdict::Missed;
  return Verdict::NotShown;
}

Verdict judgeAtMost(const Estimate& estimate, double target) {
  if (estimate.samples < 2) return Verdict::NotShown;
  if (estimate.high <= target) return Verdict::Met;
  if (estimate.low > target) return Verdict::Missed;
  return Verdict::NotShown;
}

const char* verdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::Met:
      return "met";
    case Verdict::Missed:
      return "missed";
    case Verdict::NotShown:
      return "not shown";
  }
  return "?";
}

}  // namespace vcpufold::bench
