// SPDX-License-Identifier: GPL-2.0-or-later
// vcpufold-hostd: command line only; the modes live in hostd_app.cpp.
#include <CLI/CLI.hpp>
#include <csignal>
#include <filesystem>

#include "vcpufold/common/daemon_support.h"
#include "vcpufold/common/exit_status.h"
#include "vcpufold/hostd/hostd_app.h"
#include "vcpufold/hostd/policy_command.h"
#include "vcpufold/hostd/version.h"

int main(int argc, char** argv) {
  vcpufold::keepLargeBlocksAllocated();
  // A peer that goes away mid-write must be an error on that write, not the
  // end of hostd: libvirt's client writes its RPC socket with write(2), so a
  // libvirtd stopping while a call goes out would otherwise kill hostd with
  // SIGPIPE (seen when libvirtd was stopped under load) and every lease lapse.
  ::signal(SIGPIPE, SIG_IGN);
  using vcpufold::hostd::HostdOptions;
  CLI::App app{
      "vcpufold-hostd: folds overcommitted VMs onto their fair share of the host's pCPUs. Every tick it samples\n"
      "each VM's vCPU run time and run-queue delay, computes weighted max-min fair shares of the pCPU pool, and\n"
      "sends each VM's vcpufold-agent a preferred-vCPU count over the virtio-serial port org.vcpufold.hint.0.",
      "vcpufold-hostd"};
  app.footer(
      "Modes (default: run as a daemon until SIGTERM):\n"
      "  status [--json]  print the per-VM table of the running daemon (root); --json: as JSON\n"
      "  --check-config   parse and validate the configuration, print it, exit\n"
      "  --oneshot        sample every VM for one tick, print demand, delay, shares and hints with reasons, exit\n"
      "  policy VM [show | set KEY=VALUE... | clear] [--live] [--config]\n"
      "                   a libvirt VM's fold policy, written through libvirt's API (root)\n"
      "\nPer-VM policy (libvirt): vcpufold-hostd policy VM set min-vcpus=2 weight=200, or the same element with\n"
      "    virsh metadata VM --uri https://vcpufold.org/xmlns/policy/1 --key vcpufold \\\n"
      "    --set '<policy mode=\"auto\" min-vcpus=\"2\" weight=\"200\"/>' --live --config\n"
      "\nFiles: /etc/vcpufold/hostd.toml, /run/vcpufold/hostd.sock. Metrics: http://127.0.0.1:9477/metrics.\n"
      "Documentation: docs/hostd.md, docs/policy.md, docs/allocation.md.");
  HostdOptions options;
  std::string root = "/", connect, logLevel, metrics, control;
  bool check = false, oneshot = false, version = false;
  app.add_option("-c,--config", options.configPath, "configuration file (default /etc/vcpufold/hostd.toml)");
  app.add_option("--connect", connect, "libvirt URI (default qemu:///system); implies the libvirt inventory");
  app.add_option("--root", root, "resolve /proc, /sys and /run under DIR (tests)")->check(CLI::ExistingDirectory);
  app.add_option("--log-level", logLevel, "trace, debug, info, warn or error");
  app.add_option("--metrics", metrics, "metrics address HOST:PORT, \"\" for none (default 127.0.0.1:9477)");
  app.add_option("--control-socket", control, "control socket path (default /run/vcpufold/hostd.sock)");
  auto* checkFlag = app.add_flag("--check-config", check, "validate the configuration and exit");
  auto* oneshotFlag = app.add_flag("--oneshot", oneshot, "one tick: print what hostd sees and decides, exit");
  checkFlag->excludes(oneshotFlag);
  app.add_flag("-V,--version", version, "print the version and exit");
  auto* status = app.add_subcommand("status", "print the running daemon's per-VM table");
  bool statusJson = false;
  status->add_flag("--json", statusJson, "the same as one JSON object (pools, VMs, hints, agent states), for scripts");
  vcpufold::hostd::PolicyRequest policyRequest;
  auto* policy = app.add_subcommand(
      "policy", "show, set or clear a libvirt VM's fold policy (its metadata), checked as hostd reads it");
  policy->add_option("vm", policyRequest.vm, "the libvirt domain's name")->required();
  policy->add_flag("--live", policyRequest.live, "the running VM's definition (hostd reads it at once)");
  policy->add_flag("--config", policyRequest.config,
                   "the persistent definition (kept for the next boot); neither: both when the VM has both");
  policy->fallthrough();
  policy->require_subcommand(0, 1);
  auto* policyShow =
      policy->add_subcommand("show", "print the live and persistent policy and the one in force (default)");
  policyShow->add_flag("--json", policyRequest.json, "the same as one JSON object, for scripts");
  auto* policySet = policy->add_subcommand("set",
                                           "change keys of the policy: mode=auto|off|fixed|guest, vcpus=N (fixed), "
                                           "min-vcpus=N, max-vcpus=N, weight=1..10000; KEY= unsets");
  policySet->add_option("assignments", policyRequest.assignments, "KEY=VALUE ...")->required();
  auto* policyClear = policy->add_subcommand("clear", "remove the policy metadata: the VM gets the default");
  for (auto* action : {policyShow, policySet, policyClear}) action->fallthrough();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // --help and --version-like exits are 0; a wrong command line is EX_USAGE.
    return app.exit(error) == 0 ? vcpufold::kExitOk : vcpufold::kExitUsage;
  }

  if (version) {
    std::printf("vcpufold-hostd %s\n", vcpufold::hostd::kHostdVersion);
    return 0;
  }
  options.root = root;
  options.configExplicit = !options.configPath.empty();
  // A file named on the command line is relative to where the command runs.
  if (options.configExplicit) options.configPath = std::filesystem::absolute(options.configPath).string();
  if (!connect.empty()) options.connectUri = connect;
  if (!logLevel.empty()) options.logLevel = logLevel;
  if (app.count("--metrics")) options.metricsAddress = metrics;
  if (!control.empty()) options.controlSocket = control;
  if (status->parsed()) return vcpufold::hostd::printHostdStatus(options, statusJson);
  if (policy->parsed()) {
    using Action = vcpufold::hostd::PolicyRequest::Action;
    policyRequest.action = policySet->parsed() ? Action::Set : policyClear->parsed() ? Action::Clear : Action::Show;
    return vcpufold::hostd::runPolicyCommand(options, policyRequest);
  }
  if (check) return vcpufold::hostd::checkHostdConfig(options);
  if (oneshot) return vcpufold::hostd::runHostdOneshot(options);
  return vcpufold::hostd::runHostd(options);
}
