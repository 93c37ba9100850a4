// SPDX-License-Identifier: GPL-2.0-or-later
#include "fold_without_vcpufold.h"

#include <gtest/gtest.h>

#include "pooled_runs.h"

namespace vcpufold::bench {
namespace {

// Four repetitions in which spread compute does 1.0 unit/s, vcpufold's fold
// 0.8, the workload's own fold 0.9 alone and 0.675 beside vcpufold (0.75 of
// alone), each repetition scaled by its own drift (which pairing must
// cancel). No two baselines are equal, so a ratio taken against the wrong
// one shows.
std::vector<PairedMeasurement> plantedRun() {
  std::vector<PairedMeasurement> measurements;
  const double drift[] = {1.0, 1.3, 0.7, 1.1};
  for (unsigned repetition = 0; repetition < 4; ++repetition) {
    const std::string pair = std::to_string(repetition + 1);
    const double d = drift[repetition];
    measurements.push_back({"cpuset-6.12", "compute", "unfolded", pair, 1.0 * d});
    measurements.push_back({"cpuset-6.12", "compute", "fixed", pair, 0.8 * d});
    measurements.push_back({"cpuset-6.12", "compute", "vcpufold", pair, 0.85 * d});
    measurements.push_back({"cpuset-6.12", "compute-folded", "unfolded", pair, 0.9 * d});
    measurements.push_back({"cpuset-6.12", "compute-folded", "fixed", pair, 0.675 * d});
  }
  return measurements;
}

TEST(FoldWithoutVcpufold, TellsTheFoldsOwnCostFromWhatVcpufoldAddsPairedPerRepetition) {
  const auto rows = foldWithoutVcpufold(plantedRun());
  ASSERT_EQ(rows.size(), 1U);
  EXPECT_EQ(rows[0].actuator, "cpuset-6.12");
  EXPECT_NEAR(rows[0].vcpufoldFoldOverSpread.ratio.median, 0.8, 1e-9);
  EXPECT_NEAR(rows[0].plainFoldOverSpread.ratio.median, 0.9, 1e-9);
  EXPECT_NEAR(rows[0].vcpufoldFoldOverPlain.ratio.median, 0.8 / 0.9, 1e-9);
  EXPECT_NEAR(rows[0].plainBesideVcpufold.ratio.median, 0.75, 1e-9);
  // Pairing cancels the drift: every repetition's own ratio is the same.
  EXPECT_NEAR(rows[0].vcpufoldFoldOverSpread.ratio.low, 0.8, 1e-9);
  EXPECT_NEAR(rows[0].vcpufoldFoldOverSpread.ratio.high, 0.8, 1e-9);
  EXPECT_EQ(rows[0].vcpufoldFoldOverSpread.below, 4U);
  EXPECT_EQ(rows[0].plainFoldOverSpread.below, 4U);
  EXPECT_EQ(rows[0].vcpufoldFoldOverPlain.below, 4U);
  const std::string table = renderFoldWithoutVcpufold(rows);
  EXPECT_NE(table.find("compute-folded: fixed / unfolded"), std::string::npos) << table;
  EXPECT_NE(table.find("| 4 of 4 |"), std::string::npos) << table;
}

TEST(FoldWithoutVcpufold, AWiderFoldIsSetAgainstSpreadAndAgainstTheFoldOntoOneVcpuInItsOwnRepetition) {
  auto measurements = plantedRun();
  EXPECT_TRUE(foldWithoutVcpufold(measurements)[0].widerFolds.empty());
  const double drift[] = {1.0, 1.3, 0.7, 1.1};
  for (unsigned repetition = 0; repetition < 4; ++repetition)
    measurements.push_back(
        {"cpuset-6.12", "compute-folded-2", "unfolded", std::to_string(repetition + 1), 0.97 * drift[repetition]});
  const auto rows = foldWithoutVcpufold(measurements);
  ASSERT_EQ(rows.size(), 1U);
  ASSERT_EQ(rows[0].widerFolds.size(), 1U);
  EXPECT_EQ(rows[0].widerFolds[0].workload, "compute-folded-2");
  const Estimate& overSpread = rows[0].widerFolds[0].overSpread.ratio;
  EXPECT_EQ(overSpread.samples, 4U);
  EXPECT_NEAR(overSpread.median, 0.97, 1e-9);
  EXPECT_NEAR(overSpread.low, 0.97, 1e-9);
  EXPECT_NEAR(overSpread.high, 0.97, 1e-9);
  // Against the fold onto vCPU 0 (0.9 of spread in the planted run).
  const Estimate& overOneVcpu = rows[0].widerFolds[0].overOneVcpu.ratio;
  EXPECT_EQ(overOneVcpu.samples, 4U);
  EXPECT_NEAR(overOneVcpu.median, 0.97 / 0.9, 1e-9);
  EXPECT_EQ(rows[0].widerFolds[0].overOneVcpu.below, 0U);
  const std::string table = renderFoldWithoutVcpufold(rows);
  EXPECT_NE(table.find("| compute-folded-2 unfolded / compute unfolded | the workload's own fold onto 2 vCPUs"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("| compute-folded-2 unfolded / compute-folded unfolded | the workload's own fold onto 2 "
                       "vCPUs against its fold onto vCPU 0 | 1.08 [1.08, 1.08] | 0 of 4 |"),
            std::string::npos)
      << table;
}

TEST(FoldWithoutVcpufold, PairsOnlyMeasurementsOfTheSameRepetition) {
  auto measurements = plantedRun();
  // A repetition that measured compute-folded but lost its spread compute
  // pairs nothing across the two workloads.
  measurements.push_back({"cpuset-6.12", "compute-folded", "unfolded", "5", 100.0});
  const auto rows = foldWithoutVcpufold(measurements);
  ASSERT_EQ(rows.size(), 1U);
  EXPECT_EQ(rows[0].plainFoldOverSpread.ratio.samples, 4U);
  EXPECT_NEAR(rows[0].plainFoldOverSpread.ratio.median, 0.9, 1e-9);
}

TEST(FoldWithoutVcpufold, NothingWithoutBothWorkloads) {
  std::vector<PairedMeasurement> measurements;
  for (const auto& measurement : plantedRun())
    if (measurement.workload == "compute") measurements.push_back(measurement);
  EXPECT_TRUE(foldWithoutVcpufold(measurements).empty());
  EXPECT_EQ(renderFoldWithoutVcpufold({}), "");
}

TEST(FoldWithoutVcpufold, PooledRunsPairWithinEachRunOnly) {
  // Two runs whose repetition numbers overlap: repetition 1 of run 2 must not
  // pair with repetition 1 of run 1.
  const std::string header =
      "actuator,workload,mode,repetition,guest,unit_s,units_per_s_all_guests,overdue_acks,hint_changes,minutes,"
      "steady_hint_changes,steady_minutes,host_wait_credits\n";
  const auto row = [](const std::string& workload, const std::string& mode, double throughput) {
    return "cpuset-6.12," + workload + "," + mode + ",1,1,1.0," + std::to_string(throughput) + ",0,0,0,0,0,0\n";
  };
  const std::string first = header + row("compute", "unfolded", 1.0) + row("compute", "fixed", 0.5) +
                            row("compute-folded", "unfolded", 0.8) + row("compute-folded", "fixed", 0.6);
  const std::string second = header + row("compute", "unfolded", 4.0) + row("compute", "fixed", 2.0) +
                             row("compute-folded", "unfolded", 3.2) + row("compute-folded", "fixed", 2.4);
  const auto measurements = readGuestRuns({first, second});
  EXPECT_EQ(measurements.size(), 8U);
  const auto rows = foldWithoutVcpufold(measurements);
  ASSERT_EQ(rows.size(), 1U);
  EXPECT_EQ(rows[0].vcpufoldFoldOverSpread.ratio.samples, 2U);
  EXPECT_NEAR(rows[0].vcpufoldFoldOverSpread.ratio.median, 0.5, 1e-9);
  EXPECT_NEAR(rows[0].plainFoldOverSpread.ratio.median, 0.8, 1e-9);
  EXPECT_NEAR(rows[0].plainBesideVcpufold.ratio.median, 0.75, 1e-9);
}

}  // namespace
}  // namespace vcpufold::bench
