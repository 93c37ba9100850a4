// SPDX-License-Identifier: GPL-2.0-or-later
#include "schedule.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace vcpufold::bench {
namespace {

constexpr unsigned kMaxTasks = 256;

std::vector<std::string> fields(const std::string& text) {
  std::vector<std::string> parts;
  std::istringstream stream(text);
  for (std::string part; std::getline(stream, part, ',');) parts.push_back(part);
  return parts;
}

bool number(const std::string& text, double& value) {
  std::istringstream stream(text);
  return (stream >> value) && stream.eof() && std::isfinite(value) && value >= 0;
}

bool count(const std::string& text, unsigned& value) {
  double parsed = 0;
  if (!number(text, parsed) || parsed != std::floor(parsed) || parsed > kMaxTasks) return false;
  value = static_cast<unsigned>(parsed);
  return true;
}

// One step of a seeded generator (splitmix64): the walk is the same every run.
std::uint64_t nextRandom(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The time between a square wave's halves or a walk's moves; 0 for the
// schedules that do not repeat.
double periodicStep(const Schedule& schedule) {
  switch (schedule.kind) {
    case Schedule::Kind::Square:
      return schedule.seconds / 2;
    case Schedule::Kind::Walk:
      return schedule.seconds;
    case Schedule::Kind::Constant:
    case Schedule::Kind::Step:
      break;
  }
  return 0;
}

}  // namespace

std::optional<Schedule> parseSchedule(const std::string& text, std::string& error) {
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const auto parts = colon == std::string::npos ? std::vector<std::string>{} : fields(text.substr(colon + 1));
  Schedule schedule;
  const auto fail = [&](const std::string& why) -> std::optional<Schedule> {
    error = "schedule \"" + text + "\": " + why;
    return std::nullopt;
  };
  if (kind == "constant") {
    schedule.kind = Schedule::Kind::Constant;
    if (parts.size() != 1 || !count(parts[0], schedule.first)) return fail("expected constant:N with N 0..256");
  } else if (kind == "step") {
    schedule.kind = Schedule::Kind::Step;
    if (parts.size() != 3 || !count(parts[0], schedule.first) || !count(parts[1], schedule.second) ||
        !number(parts[2], schedule.seconds))
      return fail("expected step:FROM,TO,AT_SECONDS");
  } else if (kind == "square") {
    schedule.kind = Schedule::Kind::Square;
    if (parts.size() != 3 || !count(parts[0], schedule.first) || !count(parts[1], schedule.second) ||
        !number(parts[2], schedule.seconds) || schedule.seconds < 0.1)
      return fail("expected square:HIGH,LOW,PERIOD_SECONDS with a period of 0.1 s or more");
  } else if (kind == "walk") {
    schedule.kind = Schedule::Kind::Walk;
    double seed = 0;
    if (parts.size() != 5 || !count(parts[0], schedule.first) || !count(parts[1], schedule.second) ||
        !count(parts[2], schedule.third) || !number(parts[3], schedule.seconds) || schedule.seconds < 0.1 ||
        !number(parts[4], seed) || schedule.second > schedule.third || schedule.first < schedule.second ||
        schedule.first > schedule.third)
      return fail("expected walk:START,MIN,MAX,EVERY_SECONDS,SEED with MIN <= START <= MAX and EVERY 0.1 s or more");
    schedule.seed = static_cast<std::uint32_t>(seed);
  } else {
    return fail("the kind is constant, step, square or walk");
  }
  return schedule;
}

std::string scheduleText(const Schedule& schedule) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.3f", schedule.seconds);
  // Trailing zeros say nothing: 2.500 -> 2.5, 3.000 -> 3.
  std::string time = seconds;
  time.erase(time.find_last_not_of('0') + 1);
  if (time.back() == '.') time.pop_back();
  const auto n = [](unsigned value) { return std::to_string(value); };
  switch (schedule.kind) {
    case Schedule::Kind::Constant:
      return "constant:" + n(schedule.first);
    case Schedule::Kind::Step:
      return "step:" + n(schedule.first) + "," + n(schedule.second) + "," + time;
    case Schedule::Kind::Square:
      return "square:" + n(schedule.first) + "," + n(schedule.second) + "," + time;
    case Schedule::Kind::Walk:
      return "walk:" + n(schedule.first) + "," + n(schedule.second) + "," + n(schedule.third) + "," + time + "," +
             std::to_string(schedule.seed);
  }
  return {};
}

unsigned tasksAt(const Schedule& schedule, double secondsSinceStart) {
  const double t = std::max(secondsSinceStart, 0.0);
  switch (schedule.kind) {
    case Schedule::Kind::Constant:
      return schedule.first;
    case Schedule::Kind::Step:
      return t < schedule.seconds ? schedule.first : schedule.second;
    case Schedule::Kind::Square:
      return std::fmod(t, schedule.seconds) < schedule.seconds / 2 ? schedule.first : schedule.second;
    case Schedule::Kind::Walk: {
      std::uint64_t state = schedule.seed;
      unsigned tasks = schedule.first;
      const auto moves = static_cast<std::uint64_t>(t / schedule.seconds);
      for (std::uint64_t i = 0; i < moves; ++i) {
        const bool up = (nextRandom(state) & 1u) != 0;
        if (up && tasks < schedule.third)
          ++tasks;
        else if (!up && tasks > schedule.second)
          --tasks;
        else if (tasks < schedule.third)
          ++tasks;  // at a bound, the walk turns back
        else if (tasks > schedule.second)
          --tasks;
      }
      return tasks;
    }
  }
  return 0;
}

std::vector<double> changeTimes(const Schedule& schedule, double duration) {
  std::vector<double> times;
  if (schedule.kind == Schedule::Kind::Step) {
    if (schedule.seconds > 0 && schedule.seconds < duration && schedule.first != schedule.second)
      times.push_back(schedule.seconds);
    return times;
  }
  const double step = periodicStep(schedule);
  if (step <= 0) return times;
  for (double t = step; t < duration; t += step)
    if (tasksAt(schedule, t) != tasksAt(schedule, t - step / 2)) times.push_back(t);
  return times;
}

std::optional<double> nextStepAfter(const Schedule& schedule, double secondsSinceStart) {
  const double t = std::max(secondsSinceStart, 0.0);
  if (schedule.kind == Schedule::Kind::Step)
    return t < schedule.seconds ? std::optional<double>(schedule.seconds) : std::nullopt;
  const double step = periodicStep(schedule);
  if (step <= 0) return std::nullopt;
  // A microsecond past the boundary: tasksAt divides by the step, and at the
  // boundary itself rounding can land on the old side.
  return (std::floor(t / step) + 1) * step + 1e-6;
}

}  // namespace vcpufold::bench
