// SPDX-License-Identifier: GPL-2.0-or-later
#include "where_ran.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "bench_text.h"
#include "statistics.h"

namespace vcpufold::bench {

namespace {

std::vector<unsigned> parseList(const std::string& list) {
  std::vector<unsigned> cpus;
  std::istringstream parts(list);
  for (std::string part; std::getline(parts, part, ',');) {
    const auto dash = part.find('-');
    try {
      const unsigned first = static_cast<unsigned>(std::stoul(part.substr(0, dash)));
      const unsigned last = dash == std::string::npos ? first : static_cast<unsigned>(std::stoul(part.substr(dash + 1)));
      for (unsigned cpu = first; cpu <= last && cpu < 4096; ++cpu) cpus.push_back(cpu);
    } catch (const std::exception&) {
      return {};
    }
  }
  return cpus;
}

// The CPUs the table speaks of in one sample: those outside its preferred
// set, or outside the first `foldedVcpus` when it was not folded.
std::vector<unsigned> notPreferred(const WhereSample& sample, unsigned foldedVcpus) {
  std::set<unsigned> preferred(sample.preferred.begin(), sample.preferred.end());
  std::vector<unsigned> all;
  for (const auto& [cpu, ticks] : sample.stat) all.push_back(cpu);
  if (preferred.size() >= all.size()) {
    preferred.clear();
    for (unsigned cpu = 0; cpu < foldedVcpus; ++cpu) preferred.insert(cpu);
  }
  std::vector<unsigned> outside;
  for (const unsigned cpu : all)
    if (!preferred.count(cpu)) outside.push_back(cpu);
  return outside;
}

// Busy share (user, nice, system, irq, softirq over all ticks) per vCPU outside, averaged.
double busyShare(const WhereSample& sample, const std::vector<unsigned>& cpus) {
  double share = 0;
  unsigned counted = 0;
  for (const unsigned cpu : cpus) {
    const auto& ticks = sample.stat.at(cpu);
    if (ticks.size() < 7) continue;
    const long long busy = ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6];
    const long long total = busy + ticks[3] + ticks[4];
    if (total <= 0) continue;
    share += static_cast<double>(busy) / static_cast<double>(total);
    ++counted;
  }
  return counted ? share / counted : 0;
}

// An event's count per second per vCPU outside.
double rateOutside(const WhereSample& sample, const std::string& event, const std::vector<unsigned>& cpus) {
  const auto found = sample.events.find(event);
  if (found == sample.events.end() || cpus.empty() || sample.windowSeconds <= 0) return 0;
  long long total = 0;
  for (const unsigned cpu : cpus) {
    const auto at = found->second.find(cpu);
    if (at != found->second.end()) total += at->second;
  }
  return static_cast<double>(total) / static_cast<double>(cpus.size()) / sample.windowSeconds;
}

std::string cell(const std::vector<double>& values, const char* spec) {
  if (values.empty()) return "-";
  return format(spec, median(values));
}

}  // namespace

WhereSample parseWhere(const std::string& text) {
  WhereSample sample;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string kind;
    fields >> kind;
    if (kind == "window") {
      fields >> sample.windowSeconds;
    } else if (kind == "preferred") {
      std::string list;
      fields >> list;
      sample.preferred = parseList(list);
    } else if (kind == "stat") {
      unsigned cpu = 0;
      std::vector<long long> ticks(7, 0);
      if (!(fields >> cpu)) continue;
      for (auto& value : ticks) fields >> value;
      if (fields) sample.stat[cpu] = ticks;
    } else if (kind == "irq" || kind == "softirq" || kind == "thread") {
      std::string name;
      unsigned cpu = 0;
      long long count = 0;
      if (fields >> name >> cpu >> count) sample.events[kind + " " + name][cpu] += count;
    }
  }
  return sample;
}

std::string renderWhereTable(const std::vector<WhereSample>& samples, unsigned foldedVcpus) {
  std::vector<std::string> actuators;
  for (const auto& sample : samples)
    if (std::find(actuators.begin(), actuators.end(), sample.actuator) == actuators.end())
      actuators.push_back(sample.actuator);
  std::ostringstream out;
  for (const auto& actuator : actuators) {
    std::map<GuestMode, std::vector<std::pair<const WhereSample*, std::vector<unsigned>>>> byMode;
    std::map<std::string, double> folded;  // event -> summed rate in the folded modes, to rank them
    for (const auto& sample : samples) {
      if (sample.actuator != actuator || sample.stat.empty()) continue;
      auto outside = notPreferred(sample, foldedVcpus);
      if (sample.mode != GuestMode::Unfolded)
        for (const auto& [event, counts] : sample.events) folded[event] += rateOutside(sample, event, outside);
      byMode[sample.mode].push_back({&sample, std::move(outside)});
    }
    if (byMode.empty()) continue;
    out << "`" << actuator << "`: per vCPU outside the preferred set (unfolded: outside the first " << foldedVcpus
        << "), medians over guests and repetitions\n\n| | unfolded | vcpufold | fixed |\n| --- | ---: | ---: | ---: |\n";
    const auto row = [&](const std::string& label, auto value, const char* spec) {
      out << "| " << label;
      for (const GuestMode mode : kGuestModes) {
        std::vector<double> values;
        for (const auto& [sample, outside] : byMode[mode]) values.push_back(value(*sample, outside));
        out << " | " << cell(values, spec);
      }
      out << " |\n";
    };
    row("busy (% of its time)", [](const WhereSample& s, const auto& cpus) { return 100 * busyShare(s, cpus); },
        "%.1f");
    // The events that ran most there while folded, by kind.
    for (const auto& [kind, most] : {std::pair<std::string, int>{"irq", 5}, {"softirq", 4}, {"thread", 6}}) {
      std::vector<std::pair<double, std::string>> ranked;
      for (const auto& [event, rate] : folded)
        if (event.rfind(kind + " ", 0) == 0 && rate > 0) ranked.push_back({rate, event});
      std::sort(ranked.rbegin(), ranked.rend());
      if (ranked.size() > static_cast<std::size_t>(most)) ranked.resize(static_cast<std::size_t>(most));
      for (const auto& [rate, event] : ranked)
        row(event + (kind == "thread" ? " (ticks/s)" : " (/s)"),
            [&event](const WhereSample& s, const auto& cpus) { return rateOutside(s, event, cpus); }, "%.1f");
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace vcpufold::bench
