// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// ChildProcess: runs a real binary for an integration test, with bounded waits.
// The destructor kills it, so a failing test never leaves it behind; and the
// kernel kills it when the test process dies (PR_SET_PDEATHSIG), so neither
// does a test that is killed.

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace vcpufold::testing {

class ChildProcess {
 public:
  ChildProcess(const std::string& binary, const std::vector<std::string>& args, const std::string& logFile);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  [[nodiscard]] pid_t pid() const { return pid_; }
  void signal(int signo) const;
  // The exit status (WEXITSTATUS, or 128+signal) once it ends, nullopt after timeoutMs.
  std::optional<int> waitExit(int timeoutMs);
  [[nodiscard]] bool running();
  // VmRSS from /proc/<pid>/status, in KiB.
  [[nodiscard]] long rssKib() const;

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// Runs a shell command line to completion; returns what it printed (stdout and stderr).
std::string runShell(const std::string& command);

// Polls condition every pollMs until it holds or timeoutMs passes; returns its last value.
bool waitUntil(const std::function<bool()>& condition, int timeoutMs, int pollMs = 50);

// Runs a command to completion (bounded) and returns its exit status.
int runToCompletion(const std::string& binary, const std::vector<std::string>& args, const std::string& logFile,
                    int timeoutMs);

}  // namespace vcpufold::testing
