// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/vcpu_time_report.h"

#include <gtest/gtest.h>

using namespace vcpufold::hostd;

namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

VmSample sampleAt(double seconds, std::vector<VcpuCounters> vcpus) {
  return VmSample{std::move(vcpus), static_cast<std::int64_t>(seconds * kSecond), std::nullopt};
}

}  // namespace

TEST(VcpuTimeReport, SaysEachVcpusRunAndWaitFromTheSampleBeforeTheWaitToTheNewest) {
  // One tick a second; the wait began at 10.4 s. vCPU 0 runs the guest's
  // work and waits for a pCPU; vCPU 1 sleeps throughout.
  std::deque<VmSample> recent{
      sampleAt(9.0, {{5 * kSecond, 1 * kSecond}, {kSecond / 10, 0}}),
      sampleAt(10.0, {{6 * kSecond, 1 * kSecond + kSecond / 2}, {kSecond / 10, 0}}),
      sampleAt(11.0, {{6 * kSecond + kSecond / 2, 2 * kSecond}, {kSecond / 10, 0}}),
      sampleAt(13.0, {{7 * kSecond + kSecond / 2, 3 * kSecond}, {kSecond / 10 + kSecond / 100, 0}}),
  };
  const auto text = describeVcpuTimeSince(recent, 10 * kSecond + 4 * kSecond / 10);
  ASSERT_TRUE(text);
  EXPECT_EQ(*text,
            "from 0.4 s before the wait to 2.6 s into it, its 2 vCPUs ran 1.50/0.01 s and waited to run 1.50/0.00 s");
}

TEST(VcpuTimeReport, AWaitOlderThanEverySampleIsSaidFromTheOldest) {
  std::deque<VmSample> recent{sampleAt(20.0, {{0, 0}}), sampleAt(21.0, {{kSecond / 4, 3 * kSecond / 4}})};
  EXPECT_EQ(describeVcpuTimeSince(recent, 18 * kSecond),
            "from 2.0 s into the wait to 3.0 s into it, its 1 vCPUs ran 0.25 s and waited to run 0.75 s");
}

TEST(VcpuTimeReport, SaysNothingWithoutTwoComparableSamples) {
  const auto since = 10 * kSecond;
  EXPECT_FALSE(describeVcpuTimeSince({}, since));
  EXPECT_FALSE(describeVcpuTimeSince({sampleAt(9.0, {{kSecond, 0}})}, since)) << "one sample";
  EXPECT_FALSE(describeVcpuTimeSince({sampleAt(9.0, {{kSecond, 0}}), sampleAt(11.0, {{kSecond, 0}, {0, 0}})}, since))
      << "a vCPU was plugged between them";
  EXPECT_FALSE(describeVcpuTimeSince({sampleAt(9.0, {{kSecond, 0}}), sampleAt(11.0, {{kSecond / 2, 0}})}, since))
      << "run time went back: the VM restarted";
  EXPECT_FALSE(describeVcpuTimeSince({sampleAt(9.0, {{0, kSecond}}), sampleAt(11.0, {{kSecond, 0}})}, since))
      << "wait went back";
}
