// SPDX-License-Identifier: GPL-2.0-or-later
// vcpufold-lab-ctl SOCKET COMMAND [TIMEOUT_S]: runs COMMAND in a lab guest
// through its control port (a test and demo aid), prints its output and
// exits with its status (124 when the guest does not answer in time).

#include <cstdio>
#include <string>

#include "guest_control.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: vcpufold-lab-ctl SOCKET COMMAND [TIMEOUT_S]\n");
    return 2;
  }
  const int timeoutMs = (argc > 3 ? std::stoi(argv[3]) : 60) * 1000;
  vcpufold::testing::GuestControl control(argv[1]);
  auto result = control.run(argv[2], timeoutMs);
  if (!result) return 124;
  std::fputs(result->output.c_str(), stdout);
  return result->status;
}
