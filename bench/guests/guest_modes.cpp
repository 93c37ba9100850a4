// SPDX-License-Identifier: GPL-2.0-or-later
#include "guest_modes.h"

#include <csignal>
#include <cstdio>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "bench_text.h"

namespace vcpufold::bench {

namespace {

constexpr int kDecisionWaitMs = 30'000;

}  // namespace

ModeSession::ModeSession(GuestLab& lab, GuestMode mode, const ModeSettings& settings, const std::string& logName)
    : lab_(lab), mode_(mode) {
  if (mode == GuestMode::Unfolded) {
    lab.stopAgents();  // none runs after the last session's undo; this checks every guest is unfolded
    return;
  }
  lab.setPolicy(mode == GuestMode::Fixed
                    ? "<policy mode=\"fixed\" vcpus=\"" + std::to_string(settings.fixedVcpus) + "\"/>"
                    : "<policy mode=\"auto\" min-vcpus=\"1\"/>");
  lab.startAgents();
  config_ = settings.workDirectory + "/hostd.toml";
  hostdBinary_ = settings.hostdBinary;
  std::string text = "[hostd]\n";
  if (settings.reserveCpus > 0) text += "reserve_cpus = " + format("%.1f", settings.reserveCpus) + "\n";
  text += "[metrics]\naddress = \"\"\n[control]\nsocket = \"" + settings.workDirectory + "/hostd.sock\"\n";
  if (!writeWholeFile(config_, text)) throw std::runtime_error("cannot write " + config_);
  const std::string log = settings.workDirectory + "/" + logName;
  hostd_ =
      std::make_unique<testing::ChildProcess>(settings.hostdBinary, std::vector<std::string>{"--config", config_}, log);
  try {
    waitUntilAgentsFollow(log);
  } catch (...) {
    hostd_.reset();
    lab_.stopAgents();
    throw;
  }
}

ModeSession::~ModeSession() {
  if (mode_ == GuestMode::Unfolded) return;
  if (hostd_) {
    hostd_->signal(SIGTERM);
    hostd_->waitExit(10'000);
    hostd_.reset();
  }
  try {
    lab_.stopAgents();
  } catch (const std::exception& error) {
    // A destructor cannot throw; the next unfolded measurement's start
    // stops the agents again, and fails the run if a guest stays folded.
    std::fprintf(stderr, "vcpufold-bench-guests: %s\n", error.what());
  }
}

// Until every guest's agent follows hostd: its row of `vcpufold-hostd status`
// ends in CONTROL "host" (an acknowledged hint, applied). Without agents,
// until hostd lists every guest (it samples them, with no one to hint).
void ModeSession::waitUntilAgentsFollow(const std::string& hostdLog) {
  const std::string status = "'" + hostdBinary_ + "' --config '" + config_ + "' status 2>&1";
  std::string last;
  const bool following = testing::waitUntil(
      [&] {
        last = testing::runShell(status);
        for (const auto& name : lab_.names()) {
          static const std::regex followingRow(R"(^(\S+)\s.*\shost\s*$)");
          static const std::regex listedRow(R"(^(\S+)\s+\d+\s.*$)");
          const std::regex& row = lab_.runsAgents() ? followingRow : listedRow;
          bool found = false;
          std::istringstream lines(last);
          for (std::string line; std::getline(lines, line);) {
            std::smatch match;
            if (std::regex_match(line, match, row) && match[1] == name) found = true;
          }
          if (!found) return false;
        }
        return true;
      },
      kDecisionWaitMs, 500);
  if (!following)
    throw std::runtime_error(
        std::string(lab_.runsAgents() ? "not every guest's agent followed hostd" : "hostd did not list every guest") +
        " within " + std::to_string(kDecisionWaitMs / 1000) + " s; see " + hostdLog + "; status said:\n" + last);
}

}  // namespace vcpufold::bench
