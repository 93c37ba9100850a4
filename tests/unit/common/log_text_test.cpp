// SPDX-License-Identifier: GPL-2.0-or-later
// escapeForLog and LogThrottle: what a guest can and cannot put in hostd's log.

#include <gtest/gtest.h>

#include "vcpufold/common/log_text.h"
#include "vcpufold/common/log_throttle.h"

using vcpufold::escapeForLog;
using vcpufold::LogThrottle;

TEST(EscapeForLog, PrintableTextAndUtf8PassUnchanged) {
  EXPECT_EQ(escapeForLog("vm-1: agent 0.1.0"), "vm-1: agent 0.1.0");
  EXPECT_EQ(escapeForLog("gast-\xC3\xBC" "ber"), "gast-\xC3\xBC" "ber");  // ü
}

TEST(EscapeForLog, ControlsThatCouldForgeALineAreEscaped) {
  EXPECT_EQ(escapeForLog("a\nb\rc\td\x1B[31m"), "a\\x0Ab\\x0Dc\\x09d\\x1B[31m");
  EXPECT_EQ(escapeForLog("del\x7F"), "del\\x7F");
  EXPECT_EQ(escapeForLog("back\\slash"), "back\\\\slash");
}

TEST(EscapeForLog, C1BidiAndLineSeparatorsAreEscaped) {
  EXPECT_EQ(escapeForLog("\xC2\x85"), "\\u{0085}");          // NEL
  EXPECT_EQ(escapeForLog("x\xE2\x80\xAEy"), "x\\u{202E}y");  // right-to-left override
  EXPECT_EQ(escapeForLog("\xE2\x81\xA6"), "\\u{2066}");      // left-to-right isolate
  EXPECT_EQ(escapeForLog("\xE2\x80\xA8\xE2\x80\xA9"), "\\u{2028}\\u{2029}");
}

TEST(EscapeForLog, InvalidUtf8IsEscapedBytewise) {
  EXPECT_EQ(escapeForLog("\xFF"), "\\xFF");
  EXPECT_EQ(escapeForLog("\xC0\xAF"), "\\xC0\\xAF");      // overlong '/'
  EXPECT_EQ(escapeForLog("\xED\xA0\x80"), "\\xED\\xA0\\x80");  // a surrogate
  EXPECT_EQ(escapeForLog("\xE2\x80"), "\\xE2\\x80");      // cut short
}

TEST(EscapeForLog, LongTextIsCut) {
  EXPECT_EQ(escapeForLog(std::string(600, 'a'), 10), "aaaaaaaaaa...");
}

TEST(EscapeWithin, FitsTheLimitAndCutsBetweenWholeCharacters) {
  EXPECT_EQ(vcpufold::escapeWithin("short", 10), "short");
  EXPECT_EQ(vcpufold::escapeWithin("exactly-10", 10), "exactly-10") << "what fits is not cut";
  EXPECT_EQ(vcpufold::escapeWithin("eleven-byte", 10), "eleven-...");
  // A 3-byte character where the cut falls is left out whole.
  EXPECT_EQ(vcpufold::escapeWithin("abcdef\xE2\x82\xACgh", 10), "abcdef...");
  // An escape is never split: "\x1B" is 4 bytes.
  EXPECT_EQ(vcpufold::escapeWithin("abcde\x1B[31m", 10), "abcde...");
  EXPECT_EQ(vcpufold::escapeWithin("a\nb", 10), "a\\x0Ab");
  EXPECT_EQ(vcpufold::escapeWithin("\xFF", 10), "\\xFF");
  EXPECT_EQ(vcpufold::escapeWithin("", 10), "");
  for (std::size_t limit = 0; limit < 40; ++limit)
    EXPECT_LE(vcpufold::escapeWithin(std::string(50, '\x01'), limit).size(), limit) << limit;
}

TEST(LogThrottle, AllowsTheBudgetThenCountsAndReportsOnTheNextWindow) {
  LogThrottle throttle(3, std::chrono::milliseconds(1000));
  const auto start = LogThrottle::Clock::time_point{} + std::chrono::hours(1);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(throttle.allow(start));
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(throttle.allow(start + std::chrono::milliseconds(500)));
  EXPECT_EQ(throttle.suppressedTotal(), 100u);
  EXPECT_TRUE(throttle.allow(start + std::chrono::milliseconds(1001)));
  EXPECT_EQ(throttle.suppressedBefore(), 100u) << "the first line of a new window says how many were dropped";
  EXPECT_TRUE(throttle.allow(start + std::chrono::milliseconds(1002)));
  EXPECT_EQ(throttle.suppressedBefore(), 0u);
}
