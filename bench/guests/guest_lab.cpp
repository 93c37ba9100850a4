// SPDX-License-Identifier: GPL-2.0-or-later
#include "guest_lab.h"

#include <cstdio>
#include <future>
#include <regex>
#include <stdexcept>

#include "child_process.h"
#include "lab_domains.h"
#include "qemu_guest.h"

namespace vcpufold::bench {

namespace {

const std::string kGuests = VCPUFOLD_SOURCE_DIR "/tests/lab/libvirt/guests.sh";
constexpr int kBootMs = 240'000;  // three TCG guests booting at once on 2 pCPUs

std::string shellQuoted(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += " " + name;
  return out;
}

}  // namespace

GuestLab::GuestLab(GuestLabSpec spec) : spec_(std::move(spec)) {
  testing::destroyStaleLabDomains();
  std::string environment = "GUEST_BINS=" + shellQuoted(spec_.agentBinary + " " + spec_.hackbenchBinary) +
                            " VCPUS=" + std::to_string(spec_.vcpus) + " MEMORY=" + std::to_string(spec_.memoryMiB);
  if (!spec_.kernel.empty()) environment += " KERNEL=" + shellQuoted(spec_.kernel);
  if (!spec_.cloudKernel.empty()) environment += " CLOUD_KERNEL=" + shellQuoted(spec_.cloudKernel);
  if (!spec_.cpuset.empty()) environment += " CPUSET=" + shellQuoted(spec_.cpuset);
  if (!spec_.kernelArgs.empty()) environment += " LAB_ARGS=" + shellQuoted(spec_.kernelArgs);
  const std::string started =
      testing::runShell(environment + " " + kGuests + " start guests-bench" + joined(spec_.names) + " 2>&1");
  if (started.find("error") != std::string::npos) {
    stop();
    throw std::runtime_error("the lab guests did not start: " + started);
  }
  for (const auto& name : spec_.names)
    controls_.push_back(
        std::make_unique<testing::GuestControl>(testing::labDirectory() + "/libvirt/" + name + ".ctl.sock"));
  // Ready once the payload has written the guest's commands (the control
  // port answers before it has).
  for (std::size_t index = 0; index < controls_.size(); ++index)
    if (!testing::waitUntil(
            [&] {
              const auto said = controls_[index]->run("test -e /tmp/gb/ready", 5'000);
              return said && said->status == 0;
            },
            kBootMs, 500)) {
      stop();
      throw std::runtime_error(spec_.names[index] + " did not answer its control port within " +
                               std::to_string(kBootMs / 1000) + " s (console: " + testing::labDirectory() +
                               "/libvirt/" + spec_.names[index] + ".console.log)");
    }
}

GuestLab::~GuestLab() { stop(); }

void GuestLab::stop() {
  controls_.clear();
  testing::runShell(kGuests + " stop" + joined(spec_.names) + " 2>&1");
}

std::string GuestLab::run(std::size_t index, const std::string& command, int timeoutMs) {
  const auto result = controls_.at(index)->run(command, timeoutMs);
  if (!result) throw std::runtime_error(spec_.names[index] + " did not answer \"" + command + "\"");
  if (result->status != 0)
    throw std::runtime_error(spec_.names[index] + ": \"" + command + "\" failed: " + result->output);
  return result->output;
}

std::string GuestLab::kernelRelease() {
  const std::string release = run(0, "uname -r");
  return release.substr(0, release.find('\n'));
}

void GuestLab::startAgents() {
  if (runsAgents()) onEveryGuest(spec_.agentStartCommand, 60'000);
}

void GuestLab::stopAgents() {
  // "stopped; preferred CPUS, cpuset CPUS": an unfolded guest prefers all its
  // vCPUs (or has no preferred file) and has no fold cgroup left.
  const std::string all = spec_.vcpus > 1 ? "0-" + std::to_string(spec_.vcpus - 1) : "0";
  const auto stopped = onEveryGuest("sh /lab/agent stop", 30'000);
  for (std::size_t index = 0; index < controls_.size(); ++index) {
    const std::string& said = stopped[index];
    if (said.find("preferred " + all + ",") == std::string::npos && said.find("preferred -,") == std::string::npos)
      throw std::runtime_error(spec_.names[index] + " stayed folded when its agent stopped: " + said);
    if (said.find("cpuset -") == std::string::npos && said.find("cpuset " + all) == std::string::npos)
      throw std::runtime_error(spec_.names[index] + " kept a folded cpuset when its agent stopped: " + said);
  }
}

void GuestLab::setPolicy(const std::string& policyElement) {
  for (const auto& name : spec_.names) {
    const std::string said = testing::runShell("virsh -c qemu:///system metadata " + name +
                                               " https://vcpufold.org/xmlns/policy/1 --key vcpufold --set " +
                                               shellQuoted(policyElement) + " --live 2>&1");
    if (said.find("Metadata modified") == std::string::npos)
      throw std::runtime_error(name + ": setting the policy failed: " + said);
  }
}

std::vector<std::string> GuestLab::actuatorsInUse() {
  static const std::regex chosen(R"(; actuator (\w+);)");
  std::vector<std::string> actuators;
  for (std::size_t index = 0; index < controls_.size(); ++index) {
    const std::string line = run(index, "grep -o '; actuator [a-z]*;' /tmp/gb/agent.log | tail -1 || true");
    std::smatch match;
    actuators.push_back(std::regex_search(line, match, chosen) ? match[1].str() : "none");
  }
  return actuators;
}

std::vector<std::string> GuestLab::onEveryGuest(const std::string& command, int timeoutMs) {
  std::vector<std::future<std::string>> answers;
  for (std::size_t index = 0; index < controls_.size(); ++index)
    answers.push_back(
        std::async(std::launch::async, [this, index, command, timeoutMs] { return run(index, command, timeoutMs); }));
  std::vector<std::string> outputs;
  std::string failure;
  for (auto& answer : answers) try {
      outputs.push_back(answer.get());
    } catch (const std::exception& error) {
      if (failure.empty()) failure = error.what();
    }
  if (!failure.empty()) throw std::runtime_error(failure);
  return outputs;
}

std::vector<std::string> GuestLab::runWorkload(const std::string& workload, unsigned size, unsigned units,
                                               int timeoutMs, std::vector<std::string>* where) {
  for (std::size_t index = 0; index < controls_.size(); ++index)
    run(index, "sh /lab/run " + workload + " " + std::to_string(size));
  // What ran where is a diagnosis, not the measurement: a guest too loaded
  // to answer its snapshot costs this measurement its "where" rows, not the
  // run (a run of an hour ended on one such answer).
  if (where) try {
      onEveryGuest("sh /lab/where snap start", 120'000);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "what ran where: not recorded for this measurement (%s)\n", error.what());
      where = nullptr;
    }
  // Each guest's wait on its own connection, all at once.
  std::vector<std::future<std::string>> waits;
  for (std::size_t index = 0; index < controls_.size(); ++index)
    waits.push_back(std::async(std::launch::async, [this, index, units, timeoutMs] {
      return run(index, "sh /lab/wait " + std::to_string(units), timeoutMs);
    }));
  std::string failure;
  for (auto& wait : waits) try {
      wait.get();
    } catch (const std::exception& error) {
      if (failure.empty()) failure = error.what();
    }
  if (where && failure.empty()) try {
      *where = onEveryGuest("sh /lab/where snap end && sh /lab/where diff start end", 120'000);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "what ran where: not recorded for this measurement (%s)\n", error.what());
      where->clear();
    }
  std::vector<std::string> logs;
  for (std::size_t index = 0; index < controls_.size(); ++index) {
    // A guest that did not answer its wait has a broken connection: the stop
    // goes out on a fresh one.
    try {
      logs.push_back(run(index, "sh /lab/stop", 60'000));
    } catch (const std::exception& error) {
      if (failure.empty()) failure = error.what();
    }
  }
  if (!failure.empty()) throw std::runtime_error(workload + ": " + failure);
  return logs;
}

}  // namespace vcpufold::bench
