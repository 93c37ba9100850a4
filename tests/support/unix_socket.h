#pragma once
// A connected AF_UNIX stream socket (close-on-exec), or -1.

#include <string>

namespace vcpufold::testing {

int connectUnixSocket(const std::string& path);

}  // namespace vcpufold::testing
