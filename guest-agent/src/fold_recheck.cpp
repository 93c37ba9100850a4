// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/fold_recheck.h"

namespace vcpufold::agent {

bool FoldRecheck::due(const protocol::CpuSet& cpus, protocol::Control control, MonotonicTime now,
                      std::chrono::milliseconds quietFor) const {
  if (!quietPass_ || quietPass_->cpus != cpus || quietPass_->control != control) return true;
  return now - quietPass_->at >= quietFor;
}

void FoldRecheck::applied(const protocol::CpuSet& cpus, protocol::Control control, MonotonicTime now, bool quiet) {
  if (quiet)
    quietPass_ = QuietPass{cpus, control, now};
  else
    quietPass_.reset();
}

}  // namespace vcpufold::agent
