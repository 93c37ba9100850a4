// SPDX-License-Identifier: GPL-2.0-or-later
#include "status_table.h"

#include <iterator>
#include <sstream>
#include <vector>

namespace vcpufold::testing {

std::map<std::string, std::string> statusRow(const std::string& statusText, const std::string& vm) {
  std::istringstream lines(statusText);
  std::vector<std::string> names;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    const std::vector<std::string> columns{std::istream_iterator<std::string>(words), {}};
    if (line.rfind("VM ", 0) == 0) names = columns;
    if (line.rfind(vm + " ", 0) != 0 || names.size() != columns.size()) continue;
    std::map<std::string, std::string> byName;
    for (std::size_t i = 0; i < names.size(); ++i) byName[names[i]] = columns[i];
    return byName;
  }
  return {};
}

}  // namespace vcpufold::testing
