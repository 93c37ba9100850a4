// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// One mode of the real-guest bench, set up for one measurement and undone
// after it, so that every measurement starts from unfolded guests:
//   unfolded  no hostd, no agent in any guest;
//   vcpufold  every guest's policy auto; the agents; hostd at its defaults
//             (against qemu:///system), until every agent follows it;
//   fixed     every guest's policy fixed at the given size; the same.
// Undoing stops hostd, then the agents (each unfolds its guest: checked).

#include <memory>
#include <string>

#include "child_process.h"
#include "guest_lab.h"
#include "guests_plan.h"

namespace vcpufold::bench {

struct ModeSettings {
  std::string hostdBinary;
  std::string workDirectory;  // hostd's configuration, socket and logs
  double reserveCpus = 0;     // the host CPUs beyond the bench's pCPUs, kept from hostd's capacity
  unsigned fixedVcpus = 1;
};

class ModeSession {
 public:
  // `logName` names this measurement's hostd log (in the work directory).
  ModeSession(GuestLab& lab, GuestMode mode, const ModeSettings& settings, const std::string& logName);
  ~ModeSession();
  ModeSession(const ModeSession&) = delete;
  ModeSession& operator=(const ModeSession&) = delete;

 private:
  void waitUntilAgentsFollow(const std::string& hostdLog);

  GuestLab& lab_;
  GuestMode mode_;
  std::string hostdBinary_, config_;
  std::unique_ptr<testing::ChildProcess> hostd_;
};

}  // namespace vcpufold::bench
