// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/hostd_app.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>

#include "vcpufold/common/config_file.h"
#include "vcpufold/common/daemon_support.h"
#include "vcpufold/common/exit_status.h"
#include "vcpufold/common/system_paths.h"
#include "vcpufold/hostd/hostd_daemon.h"
#include "vcpufold/hostd/libvirt_inventory.h"
#include "vcpufold/hostd/qmp_inventory.h"
#include "vcpufold/hostd/status_table.h"
#include "vcpufold/hostd/text_servers.h"
#include "vcpufold/hostd/version.h"

namespace vcpufold::hostd {
namespace {

constexpr const char* kDefaultConfig = paths::kHostdConfig;

Expected<HostdConfig> loadConfig(const HostdOptions& options) {
  const std::string path = options.configPath.empty() ? kDefaultConfig : options.configPath;
  auto loaded = loadConfigFile(options.root, path, options.configExplicit, parseHostdConfig);
  if (!loaded) return loaded.error();
  HostdConfig config = *loaded;
  if (options.connectUri) {
    config.inventory = InventoryKind::Libvirt;
    config.libvirtUri = *options.connectUri;
  }
  if (options.logLevel) config.logLevel = *options.logLevel;
  if (options.metricsAddress) config.metricsAddress = *options.metricsAddress;
  if (options.controlSocket) config.controlSocket = *options.controlSocket;
  if (auto valid = validateHostdConfig(config); !valid) return valid.error().withContext(path);
  return config;
}

std::unique_ptr<Inventory> makeInventory(const HostdConfig& config, const RootedFs& fs) {
  if (config.inventory == InventoryKind::Qmp)
    return std::make_unique<QmpInventory>(
        fs, config.qmpDirectory, config.qmpVms,
        config.qmpSocketOwner.empty() ? std::nullopt : uidOfUser(config.qmpSocketOwner));
  LibvirtInventory::startEventLoop();
  return std::make_unique<LibvirtInventory>(config.libvirtUri, fs);
}

}  // namespace

int checkHostdConfig(const HostdOptions& options) {
  auto config = loadConfig(options);
  if (!config) {
    std::fprintf(stderr, "%s\n", config.error().message.c_str());
    return kExitConfig;
  }
  std::printf("configuration ok: tick %u ms, lease %u ticks, unfold after %u ms, reserve %.2f CPUs, inventory %s",
              config->intervalMs, config->ttlTicks, config->unfoldDelayMs, config->reserveCpus,
              inventoryKindName(config->inventory));
  if (config->inventory == InventoryKind::Libvirt)
    std::printf(" (%s)", config->libvirtUri.c_str());
  else
    std::printf(" (%zu declared VMs%s%s)", config->qmpVms.size(), config->qmpDirectory.empty() ? "" : ", directory ",
                config->qmpDirectory.c_str());
  std::printf(", metrics %s, control %s\n", config->metricsAddress.empty() ? "off" : config->metricsAddress.c_str(),
              config->controlSocket.c_str());
  return 0;
}

namespace {

// The daemon's parts from the configuration, or none after saying on stderr why not.
std::optional<HostdParts> partsOrSay(const HostdOptions& options, bool reloadable) {
  auto config = loadConfig(options);
  if (!config) {
    std::fprintf(stderr, "vcpufold-hostd: %s\n", config.error().message.c_str());
    return std::nullopt;
  }
  const RootedFs fs(options.root);
  std::function<Expected<HostdConfig>()> reload;
  if (reloadable) reload = [options] { return loadConfig(options); };
  return HostdParts{*config, fs, makeInventory(*config, fs), makeDaemonLogger("vcpufold-hostd", config->logLevel),
                    std::move(reload)};
}

}  // namespace

int runHostd(const HostdOptions& options) {
  auto parts = partsOrSay(options, true);
  if (!parts) return kExitConfig;
  return HostdDaemon(std::move(*parts)).run();
}

int runHostdOneshot(const HostdOptions& options) {
  auto parts = partsOrSay(options, false);
  if (!parts) return kExitConfig;
  std::printf("vcpufold-hostd %s --oneshot: %s, sampling for %u ms\n", kHostdVersion,
              parts->inventory->describe().c_str(), parts->config.intervalMs);
  auto report = HostdDaemon::observeOnce(*parts);
  for (const auto& note : parts->inventory->takeNotes()) std::printf("%s\n", note.c_str());
  if (!report) {
    std::fprintf(stderr, "vcpufold-hostd: %s\n", report.error().message.c_str());
    return 1;
  }
  std::printf("%s", renderStatusTable(*report, true).c_str());
  std::printf("(hints as hostd would send them to cooperative agents; nothing was sent)\n");
  for (const auto& vm : report->vms) {
    if (!vm.load) continue;
    std::printf("%s: vCPU run %.2f + delay %.2f CPUs over %u vCPUs%s%s\n", vm.record.name.c_str(), vm.load->runCpus,
                vm.load->delayCpus, vm.record.vcpus, vm.record.channelSocket ? ", channel " : ", no vcpufold channel",
                vm.record.channelSocket ? vm.record.channelSocket->c_str() : "");
  }
  return 0;
}

int printHostdStatus(const HostdOptions& options, bool json) {
  auto config = loadConfig(options);
  if (!config)
    std::fprintf(stderr, "vcpufold-hostd status: %s\n(trying the default control socket)\n",
                 config.error().message.c_str());
  const std::string socket = config ? config->controlSocket : paths::kHostdControlSocket;
  auto text = readControlSocket(RootedFs(options.root).resolve(socket).string(),
                               json ? kControlStatusJsonRequest : kControlStatusRequest);
  if (!text) {
    std::fprintf(stderr, "vcpufold-hostd status: %s\n", text.error().message.c_str());
    return 1;
  }
  std::printf("%s", text->c_str());
  return 0;
}

}  // namespace vcpufold::hostd
