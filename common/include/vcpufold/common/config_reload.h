// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// What a daemon does with a new configuration on SIGHUP, key by key: a key
// the running daemon can change takes effect at once; a key that needs new
// sockets, connections or actuators keeps its running value until a restart,
// and the log says so by name. Each daemon lists its keys once
// (hostd/app/src/config_reload.cpp, guest-agent/src/config_reload.cpp), and a
// field its list does not name is reported as needing a restart, never
// dropped unsaid.

#include <functional>
#include <string>
#include <vector>

namespace vcpufold {

template <typename Config>
struct ConfigKey {
  const char* name;  // as the configuration file spells it
  std::function<bool(const Config&, const Config&)> same;
  std::function<void(Config&, const Config&)> copy;
  bool reloadable;
};

template <typename Config, typename Field>
ConfigKey<Config> configKey(const char* name, Field Config::*field, bool reloadable) {
  return {name, [field](const Config& a, const Config& b) { return a.*field == b.*field; },
          [field](Config& into, const Config& from) { into.*field = from.*field; }, reloadable};
}

// A key a running daemon applies at once, and one that waits for a restart.
template <typename Config, typename Field>
ConfigKey<Config> reloadableKey(const char* name, Field Config::*field) {
  return configKey(name, field, true);
}
template <typename Config, typename Field>
ConfigKey<Config> restartKey(const char* name, Field Config::*field) {
  return configKey(name, field, false);
}

template <typename Config>
struct ReloadPlan {
  Config applied;                        // what runs from now on
  std::vector<std::string> appliedKeys;  // changed and in effect
  std::vector<std::string> restartKeys;  // changed, in effect after a restart
};

// Config needs operator== over all its fields (defaulted), so a field `keys`
// misses is still seen.
template <typename Config>
ReloadPlan<Config> planReload(const Config& running, const Config& next, const std::vector<ConfigKey<Config>>& keys) {
  ReloadPlan<Config> plan{running, {}, {}};
  Config everyKeyCopied = running;
  for (const auto& key : keys) {
    key.copy(everyKeyCopied, next);
    if (key.same(running, next)) continue;
    if (key.reloadable) {
      key.copy(plan.applied, next);
      plan.appliedKeys.emplace_back(key.name);
    } else {
      plan.restartKeys.emplace_back(key.name);
    }
  }
  if (!(everyKeyCopied == next)) plan.restartKeys.emplace_back("(a setting this version cannot name)");
  return plan;
}

}  // namespace vcpufold
