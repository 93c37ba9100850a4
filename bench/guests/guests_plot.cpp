// SPDX-License-Identifier: GPL-2.0-or-later
#include "guests_plot.h"

#include <cstdlib>
#include <fstream>

namespace vcpufold::bench {

namespace {

void writeEstimate(std::ofstream& data, const Estimate& estimate) {
  if (estimate.samples == 0)
    data << " NaN NaN NaN";
  else
    data << ' ' << estimate.median << ' ' << estimate.low << ' ' << estimate.high;
}

}  // namespace

std::string drawGuestsPlot(const std::string& directory, const GuestsReportInput& input, std::string& error) {
  std::ofstream data(directory + "/guests-ratios.dat");
  data << "run vcpufold low high fixed low high emulated-vcpufold low high\n";
  bool any = false;
  for (const auto& actuator : input.actuators) {
    if (!actuator.skipped.empty()) continue;
    for (const auto& workload : input.workloads) {
      const Estimate vcpufold =
          guestRatio(input.samples, actuator.actuator, workload, GuestMode::Vcpufold, GuestMode::Unfolded);
      if (vcpufold.samples == 0) continue;
      any = true;
      data << '"' << workload << " (" << actuator.actuator << ")\"";
      writeEstimate(data, vcpufold);
      writeEstimate(data,
                    guestRatio(input.samples, actuator.actuator, workload, GuestMode::Fixed, GuestMode::Unfolded));
      const GuestWorkload* known = findGuestWorkload(workload);
      writeEstimate(data, known ? estimateRatio(emulatedThroughputs(input.emulated, known->emulated, "vcpufold"),
                                                emulatedThroughputs(input.emulated, known->emulated, "unfolded"))
                                : Estimate{});
      data << '\n';
    }
  }
  data.close();
  if (!any) {
    error = "nothing was measured";
    return "";
  }
  std::ofstream script(directory + "/guests-ratios.gp");
  script << "set terminal png size 1200,500\nset output 'guests-ratios.png'\n"
         << "set title \"Real guests: throughput over unfolded (median, 95% interval); emulated VMs beside\"\n"
         << "set style data histograms\nset style histogram errorbars gap 2 lw 1\n"
         << "set style fill solid 0.7 border -1\nset boxwidth 0.9\nset yrange [0:*]\nset grid ytics\n"
         << "set key below horizontal autotitle columnheader\nset xtics rotate by -25\nset datafile missing 'NaN'\n"
         << "set arrow from graph 0, first 1 to graph 1, first 1 nohead dashtype 2 lw 2\n"
         << "set ylabel 'mode / unfolded'\n"
         << "plot 'guests-ratios.dat' using 2:3:4:xtic(1) title 'vcpufold', '' using 5:6:7 title 'fixed', "
            "'' using 8:9:10 title 'emulated VMs, vcpufold'\n";
  script.close();
  const std::string command = "cd '" + directory + "' && gnuplot guests-ratios.gp 2>>gnuplot.log";
  if (std::system(command.c_str()) != 0) {
    error = "gnuplot failed; see " + directory + "/gnuplot.log";
    return "";
  }
  return "guests-ratios.png";
}

}  // namespace vcpufold::bench
