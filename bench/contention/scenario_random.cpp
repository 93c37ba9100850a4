// SPDX-License-Identifier: GPL-2.0-or-later
#include "scenario_random.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <sstream>

#include "guest_workload.h"

namespace vcpufold::bench {

namespace {

constexpr std::size_t kMostDemands = 4;
constexpr WorkloadKind kKinds[] = {WorkloadKind::Compute, WorkloadKind::Spinlock, WorkloadKind::PvSpinlock,
                                   WorkloadKind::Message};

// Uniform enough for a bench and, unlike std::uniform_int_distribution, the
// same on every standard library.
class Draw {
 public:
  explicit Draw(std::uint32_t seed) : generator_(seed) {}
  unsigned between(unsigned low, unsigned high) {
    return low + static_cast<unsigned>(generator_() % (static_cast<std::uint64_t>(high) - low + 1));
  }
  bool oneIn(unsigned n) { return between(1, n) == 1; }
  // Half-second steps within [low, high].
  double halfSeconds(double low, double high) {
    const auto steps = static_cast<unsigned>((high - low) * 2);
    return low + between(0, steps) / 2.0;
  }
  std::uint32_t seed() { return static_cast<std::uint32_t>(generator_()); }

 private:
  std::mt19937 generator_;
};

// Seeds of the draws: one generator per scenario, so a draw does not depend
// on how many came before it.
std::uint32_t scenarioSeed(std::uint32_t seed, unsigned index) {
  std::seed_seq sequence{seed, index, 0x76637075u};  // seed_seq's mixing is standard too
  std::uint32_t out = 0;
  sequence.generate(&out, &out + 1);
  return out;
}

Schedule drawSchedule(Draw& draw, unsigned vcpus, double duration) {
  const unsigned most = vcpus + vcpus / 2;
  Schedule schedule;
  switch (draw.between(0, 3)) {
    case 0:
      schedule.kind = Schedule::Kind::Constant;
      schedule.first = draw.between(0, most);
      break;
    case 1:
      schedule.kind = Schedule::Kind::Step;
      schedule.first = draw.between(0, most);
      schedule.second = draw.between(0, most);
      schedule.seconds = draw.halfSeconds(1.0, duration - 1.0);
      break;
    case 2:
      schedule.kind = Schedule::Kind::Square;
      schedule.first = draw.between(1, most);
      schedule.second = draw.between(0, schedule.first);
      schedule.seconds = draw.halfSeconds(3.0, std::max(3.0, duration));
      break;
    default: {
      schedule.kind = Schedule::Kind::Walk;
      const unsigned low = draw.between(0, most);
      const unsigned high = draw.between(low, most);
      schedule.second = low;
      schedule.third = high;
      schedule.first = draw.between(low, high);
      schedule.seconds = draw.halfSeconds(1.5, 3.0);
      schedule.seed = draw.seed() % 1'000'000;
      break;
    }
  }
  return schedule;
}

std::size_t distinctDemands(const Scenario& scenario) {
  std::vector<std::vector<unsigned>> demands;
  for (const auto& phase : scenario.phases())
    if (std::find(demands.begin(), demands.end(), phase.tasks) == demands.end()) demands.push_back(phase.tasks);
  return demands.size();
}

}  // namespace

Scenario drawScenario(std::uint32_t seed, unsigned index, const RandomBounds& bounds) {
  Draw draw(scenarioSeed(seed, index));
  Scenario scenario;
  scenario.name = "random-" + std::to_string(seed) + "-" + std::to_string(index + 1);
  scenario.pcpus = draw.between(1, std::max(1u, bounds.maxPcpus));
  scenario.warmupSeconds = bounds.warmupSeconds;
  scenario.durationSeconds = bounds.durationSeconds;
  scenario.searchSeconds = bounds.searchSeconds;
  scenario.modes = {Mode::Unfolded, Mode::StealLaw, Mode::Vcpufold, Mode::StaticFair, Mode::BestStatic};
  const unsigned vms = draw.between(bounds.minVms, bounds.maxVms);
  unsigned agents = 0;
  for (unsigned i = 0; i < vms; ++i) {
    VmSpec vm;
    vm.name = "vm-" + std::to_string(i + 1);
    vm.threadsPerCore = draw.oneIn(3) ? 2 : 1;
    vm.vcpus = vm.threadsPerCore == 2 ? 2 * draw.between(1, bounds.maxVcpus / 2) : draw.between(1, bounds.maxVcpus);
    vm.weight = 25.0 * draw.between(1, 16);
    std::vector<WorkloadKind> mix{kKinds[draw.between(0, 3)]};
    if (draw.oneIn(3)) {
      const WorkloadKind other = kKinds[draw.between(0, 3)];
      if (other != mix.front()) mix.push_back(other);
    }
    vm.workload = workloadMixName(mix);
    vm.schedule = drawSchedule(draw, vm.vcpus, bounds.durationSeconds);
    vm.agent = !draw.oneIn(6);
    agents += vm.agent ? 1 : 0;
    scenario.vms.push_back(vm);
  }
  if (agents == 0) scenario.vms.front().agent = true;  // a scenario nobody can fold measures nothing of vcpufold
  // The search measures each distinct demand on its own: more than
  // kMostDemands would leave each too few probes. The VMs whose schedules vary
  // last become constant (at their first count) until few enough remain.
  for (std::size_t i = scenario.vms.size(); i-- > 0 && distinctDemands(scenario) > kMostDemands;) {
    Schedule& schedule = scenario.vms[i].schedule;
    if (schedule.kind == Schedule::Kind::Constant) continue;
    schedule = Schedule{Schedule::Kind::Constant, tasksAt(schedule, 0)};
  }
  std::ostringstream description;
  description << "random draw " << index + 1 << " of seed " << seed << ": " << scenario.vms.size() << " VMs on "
              << scenario.pcpus << " pCPU" << (scenario.pcpus == 1 ? "" : "s");
  scenario.description = description.str();
  return scenario;
}

std::vector<Scenario> drawScenarios(unsigned count, std::uint32_t seed, const RandomBounds& bounds) {
  std::vector<Scenario> scenarios;
  for (unsigned i = 0; i < count; ++i) scenarios.push_back(drawScenario(seed, i, bounds));
  return scenarios;
}

std::string scenarioFileText(const Scenario& scenario) {
  // toml++ writes it (quoting, floats, the [[vm]] tables); the keys are the
  // scenario file's (scenario_file.h), read back by parseScenarioFile.
  toml::table file{{"name", scenario.name},
                   {"description", scenario.description},
                   {"pcpus", static_cast<std::int64_t>(scenario.pcpus)},
                   {"warmup_s", scenario.warmupSeconds},
                   {"duration_s", scenario.durationSeconds},
                   {"search_s", scenario.searchSeconds}};
  if (scenario.repetitions) file.insert("repetitions", static_cast<std::int64_t>(*scenario.repetitions));
  toml::array modes;
  for (Mode mode : scenario.modes) modes.push_back(modeName(mode));
  file.insert("modes", std::move(modes));
  toml::array vms;
  for (const auto& vm : scenario.vms) {
    toml::table table{{"name", vm.name},
                      {"vcpus", static_cast<std::int64_t>(vm.vcpus)},
                      {"threads_per_core", static_cast<std::int64_t>(vm.threadsPerCore)},
                      {"weight", vm.weight},
                      {"workload", vm.workload},
                      {"schedule", scheduleText(vm.schedule)}};
    if (!vm.agent) table.insert("agent", false);
    vms.push_back(std::move(table));
  }
  file.insert("vm", std::move(vms));
  std::ostringstream out;
  out << "# SPDX-License-Identifier: GPL-2.0-or-later\n" << file << "\n";
  return out.str();
}

}  // namespace vcpufold::bench
