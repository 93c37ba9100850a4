// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The report's pictures, drawn by gnuplot: vcpufold's throughput ratio to each
// other mode per scenario with the 95% intervals as whiskers, and for a phased
// scenario the time series of each VM's preferred vCPUs and the total
// throughput in every mode (the first repetition), to show the fold following
// the load.

#include <string>
#include <vector>

#include "outcome.h"

namespace vcpufold::bench {

// Writes data and script files into `directory` and runs gnuplot; returns the
// PNG files made (names only), and an error line in `error` when gnuplot failed.
std::vector<std::string> drawPlots(const std::string& directory, const std::vector<ScenarioOutcome>& outcomes,
                                   std::string& error);

}  // namespace vcpufold::bench
