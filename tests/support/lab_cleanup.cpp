// SPDX-License-Identifier: GPL-2.0-or-later
#include "lab_cleanup.h"

#include <gtest/gtest.h>

namespace vcpufold::testing {
namespace {

class LabCleanup : public ::testing::Environment {
 public:
  void SetUp() override {
    destroyStaleLabDomains();
    destroyLabDomainsOnStopSignal();
  }
};

}  // namespace

bool registerLabCleanup() {
  ::testing::AddGlobalTestEnvironment(new LabCleanup);
  return true;
}

}  // namespace vcpufold::testing
