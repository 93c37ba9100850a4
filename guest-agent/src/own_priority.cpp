// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/own_priority.h"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace vcpufold::agent {

Expected<void> setOwnNice(int nice) {
  // PRIO_PROCESS with 0 is the calling thread on Linux; the agent sets it
  // before it starts any other thread, so every later one inherits it.
  if (::setpriority(PRIO_PROCESS, 0, nice) != 0)
    return Error{"cannot set nice " + std::to_string(nice) + ": " + std::strerror(errno)};
  return {};
}

int ownNice() {
  errno = 0;
  const int nice = ::getpriority(PRIO_PROCESS, 0);
  return errno == 0 ? nice : 0;
}

}  // namespace vcpufold::agent
