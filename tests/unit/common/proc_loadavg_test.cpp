// SPDX-License-Identifier: GPL-2.0-or-later
// /proc/loadavg's running count (proc_loadavg.h): the same count as
// /proc/stat's procs_running, read from the real files of this machine and of
// a captured guest, and strict about anything else.

#include "vcpufold/common/proc_loadavg.h"

#include <gtest/gtest.h>

#include "fixture_tree.h"
#include "vcpufold/common/proc_stat.h"
#include "vcpufold/common/rooted_fs.h"

using vcpufold::parseLoadavgRunning;
using vcpufold::parseProcStat;
using vcpufold::RootedFs;
using vcpufold::testing::FixtureTree;

TEST(ProcLoadavg, TheLiveFileCountsTheReaderAsRunning) {
  // This test's own thread is running while it reads, on any Linux.
  auto text = RootedFs().readFile("/proc/loadavg");  // as the agent reads it
  ASSERT_TRUE(text) << text.error().message;
  auto running = parseLoadavgRunning(*text);
  ASSERT_TRUE(running) << running.error().message << ": " << *text;
  EXPECT_GE(*running, 1u) << *text;
}

TEST(ProcLoadavg, ACapturedGuestAgreesWithItsProcStat) {
  // Both files read by the same guest, one after the other, while only its
  // capture script ran.
  FixtureTree guest("guest-proc-loadavg");
  auto running = parseLoadavgRunning(guest.read("/proc/loadavg"));
  ASSERT_TRUE(running) << running.error().message;
  auto stat = parseProcStat(guest.read("/proc/stat"));
  ASSERT_TRUE(stat) << stat.error().message;
  EXPECT_EQ(*running, stat->procsRunning);
}

TEST(ProcLoadavg, AnythingButFiveFieldsWithRunningSlashThreadsIsAnError) {
  EXPECT_EQ(*parseLoadavgRunning("0.52 0.58 0.59 3/467 12345\n"), 3u);
  EXPECT_EQ(*parseLoadavgRunning("0.00 0.00 0.00 0/1 1"), 0u);
  EXPECT_FALSE(parseLoadavgRunning(""));
  EXPECT_FALSE(parseLoadavgRunning("0.52 0.58 0.59 3/467\n"));
  EXPECT_FALSE(parseLoadavgRunning("0.52 0.58 0.59 3 467 12345\n"));
  EXPECT_FALSE(parseLoadavgRunning("0.52 0.58 0.59 -3/467 12345\n"));
  EXPECT_FALSE(parseLoadavgRunning("0.52 0.58 0.59 3/x 12345\n"));
  EXPECT_FALSE(parseLoadavgRunning("0.52 0.58 0.59 /467 12345\n"));
  EXPECT_FALSE(parseLoadavgRunning("0.52 0.58 0.59 4294967296/467 12345\n"));
  const auto error = parseLoadavgRunning("garbage");
  ASSERT_FALSE(error);
  EXPECT_NE(error.error().message.find("/proc/loadavg"), std::string::npos) << error.error().message;
}
