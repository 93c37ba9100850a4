// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Medians with 95% bootstrap intervals (percentile method, seeded, so a report
// is reproducible from its CSV), and the verdict on a target.

#include <map>
#include <string>
#include <vector>

namespace vcpufold::bench {

struct Estimate {
  double median = 0, low = 0, high = 0;  // low..high: the 95% interval
  unsigned samples = 0;
};

double median(std::vector<double> values);
// The median and its interval.
Estimate estimateMedian(const std::vector<double>& values, unsigned resamples = 4000);
// The ratio of medians median(a)/median(b), with an interval from resampling
// both sides independently.
Estimate estimateRatio(const std::vector<double>& a, const std::vector<double>& b, unsigned resamples = 4000);

// Paired: a[i] and b[i] were measured back to back (one repetition). The
// median of the per-repetition ratios a[i]/b[i], with an interval from
// resampling repetitions, so drift between repetitions cancels instead of
// widening the interval. Pairs with a non-positive side are dropped.
Estimate estimatePairedRatio(const std::vector<double>& a, const std::vector<double>& b, unsigned resamples = 4000);
// The same, keyed by repetition number: only repetitions both sides measured
// are paired (a mode that lost a run must not shift every later pair).
Estimate estimatePairedRatio(const std::map<unsigned, double>& a, const std::map<unsigned, double>& b,
                             unsigned resamples = 4000);

// "1.23 [1.10, 1.31]" (two decimals), "1.23 (one run)" from one sample, "-" from none.
std::string ratioText(const Estimate& estimate);

enum class Verdict { Met, Missed, NotShown };
// A target `value >= target` is met when the whole interval clears it,
// missed when the whole interval is below it, and not shown when it includes it.
// One sample is never enough to show anything.
Verdict judgeAtLeast(const Estimate& estimate, double target);
Verdict judgeAtMost(const Estimate& estimate, double target);
const char* verdictName(Verdict verdict);

}  // namespace vcpufold::bench
