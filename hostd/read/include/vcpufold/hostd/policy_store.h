// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A VM's policy metadata in libvirt, read and written through libvirt's API
// (virDomainGetMetadata, virDomainSetMetadata), for the policy command. The
// running domain's live definition and its persistent one are separate
// scopes, as for virsh metadata --live / --config.

#include <optional>
#include <string>

#include "vcpufold/common/expected.h"

struct _virConnect;  // libvirt's connection: its header stays inside read/

namespace vcpufold::hostd {

enum class PolicyScope { Live, Config };
const char* policyScopeName(PolicyScope scope);

class PolicyStore {
 public:
  // Read-write connection to uri (as virsh -c).
  static Expected<PolicyStore> open(const std::string& uri);
  ~PolicyStore();
  PolicyStore(PolicyStore&& other) noexcept;
  PolicyStore& operator=(PolicyStore&&) = delete;
  PolicyStore(const PolicyStore&) = delete;
  PolicyStore& operator=(const PolicyStore&) = delete;

  struct DomainState {
    bool running = false;
    bool persistent = false;  // false: a transient domain, with no definition to keep
  };
  Expected<DomainState> state(const std::string& domain);
  // The policy element in a scope; none when that scope has none.
  Expected<std::optional<std::string>> read(const std::string& domain, PolicyScope scope);
  // The domain's live XML (its definition when it is not running).
  Expected<std::string> domainXml(const std::string& domain);
  // Writes the element (none: removes it) in one scope.
  Expected<void> write(const std::string& domain, const std::optional<std::string>& xml, PolicyScope scope);

  [[nodiscard]] const std::string& uri() const { return uri_; }

 private:
  PolicyStore(std::string uri, _virConnect* connection) : uri_(std::move(uri)), connection_(connection) {}
  std::string uri_;
  _virConnect* connection_ = nullptr;
};

}  // namespace vcpufold::hostd
