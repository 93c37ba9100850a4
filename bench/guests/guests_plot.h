// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The real-guest bench's picture, drawn by gnuplot: per actuator and workload,
// vcpufold's and fixed's throughput over unfolded (median, 95% interval as
// whiskers), and the emulated bench's vcpufold / unfolded for the workload it
// is set beside.

#include <string>

#include "guests_report.h"

namespace vcpufold::bench {

// Writes guests-ratios.{dat,gp,png} into `directory`; the PNG's name, or ""
// with the reason in `error`.
std::string drawGuestsPlot(const std::string& directory, const GuestsReportInput& input, std::string& error);

}  // namespace vcpufold::bench
