// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// How many tasks an emulated VM runs over time: the demand a scenario puts on
// it. Pure: the count at a time since the start.
//
//   constant:N                          N tasks throughout
//   step:FROM,TO,AT                     FROM tasks, then TO from AT seconds on
//   square:HIGH,LOW,PERIOD              HIGH for the first half of every period, LOW for the second
//   walk:START,MIN,MAX,EVERY,SEED       a random walk: every EVERY seconds one task more or
//                                       fewer (seeded, so runs repeat), within MIN..MAX
// A task count is 0..256; 0 means idle (no tasks, not halted vCPUs with work).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vcpufold::bench {

struct Schedule {
  enum class Kind { Constant, Step, Square, Walk };
  Kind kind = Kind::Constant;
  unsigned first = 0;      // constant: the count; step: before; square: high; walk: start
  unsigned second = 0;     // step: after; square: low; walk: min
  unsigned third = 0;      // walk: max
  double seconds = 0;      // step: when; square: period; walk: interval between moves
  std::uint32_t seed = 1;  // walk
};

// Parses the forms above; an error says what is wrong.
std::optional<Schedule> parseSchedule(const std::string& text, std::string& error);
// The text parseSchedule reads back to the same schedule (seconds to the millisecond).
std::string scheduleText(const Schedule& schedule);
unsigned tasksAt(const Schedule& schedule, double secondsSinceStart);
// When the count changes within [0, duration) (for phase boundaries).
std::vector<double> changeTimes(const Schedule& schedule, double duration);
// The first time after `secondsSinceStart` at which the count may change (a
// step, a half period, a move of the walk), or nothing when it never will:
// when a follower of the schedule has to look again.
std::optional<double> nextStepAfter(const Schedule& schedule, double secondsSinceStart);

}  // namespace vcpufold::bench
