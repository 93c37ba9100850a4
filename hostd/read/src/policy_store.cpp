// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/policy_store.h"

#include <libvirt/virterror.h>

#include <cstdlib>

#include "vcpufold/hostd/libvirt_support.h"
#include "vcpufold/hostd/policy.h"

namespace vcpufold::hostd {
namespace {

unsigned flagsOf(PolicyScope scope) {
  return scope == PolicyScope::Live ? VIR_DOMAIN_AFFECT_LIVE : VIR_DOMAIN_AFFECT_CONFIG;
}

}  // namespace

const char* policyScopeName(PolicyScope scope) { return scope == PolicyScope::Live ? "live" : "config"; }

Expected<PolicyStore> PolicyStore::open(const std::string& uri) {
  silenceLibvirtErrors();
  virConnectPtr connection = virConnectOpen(uri.c_str());
  if (!connection) return libvirtError("cannot connect to " + uri);
  return PolicyStore(uri, connection);
}

PolicyStore::~PolicyStore() {
  if (connection_) virConnectClose(connection_);
}

PolicyStore::PolicyStore(PolicyStore&& other) noexcept
    : uri_(std::move(other.uri_)), connection_(std::exchange(other.connection_, nullptr)) {}

Expected<PolicyStore::DomainState> PolicyStore::state(const std::string& domain) {
  DomainHandle handle(virDomainLookupByName(connection_, domain.c_str()));
  if (!handle) return libvirtError("no domain " + domain + " on " + uri_);
  const int active = virDomainIsActive(handle.get());
  const int persistent = virDomainIsPersistent(handle.get());
  if (active < 0 || persistent < 0) return libvirtError("cannot read the state of " + domain);
  return DomainState{active == 1, persistent == 1};
}

Expected<std::optional<std::string>> PolicyStore::read(const std::string& domain, PolicyScope scope) {
  DomainHandle handle(virDomainLookupByName(connection_, domain.c_str()));
  if (!handle) return libvirtError("no domain " + domain + " on " + uri_);
  char* xml = virDomainGetMetadata(handle.get(), VIR_DOMAIN_METADATA_ELEMENT, kPolicyNamespace, flagsOf(scope));
  if (!xml) {
    if (virGetLastErrorCode() == VIR_ERR_NO_DOMAIN_METADATA) return std::optional<std::string>();
    return libvirtError(std::string("cannot read the ") + policyScopeName(scope) + " metadata of " + domain);
  }
  std::string text(xml);
  std::free(xml);
  return std::optional<std::string>(std::move(text));
}

Expected<std::string> PolicyStore::domainXml(const std::string& domain) {
  DomainHandle handle(virDomainLookupByName(connection_, domain.c_str()));
  if (!handle) return libvirtError("no domain " + domain + " on " + uri_);
  char* xml = virDomainGetXMLDesc(handle.get(), 0);
  if (!xml) return libvirtError("cannot read the XML of " + domain);
  std::string text(xml);
  std::free(xml);
  return text;
}

Expected<void> PolicyStore::write(const std::string& domain, const std::optional<std::string>& xml, PolicyScope scope) {
  DomainHandle handle(virDomainLookupByName(connection_, domain.c_str()));
  if (!handle) return libvirtError("no domain " + domain + " on " + uri_);
  // A null element removes ours, and only ours: other namespaces' metadata stays.
  if (virDomainSetMetadata(handle.get(), VIR_DOMAIN_METADATA_ELEMENT, xml ? xml->c_str() : nullptr,
                           xml ? kPolicyKey : nullptr, kPolicyNamespace, flagsOf(scope)) != 0)
    return libvirtError(std::string("cannot write the ") + policyScopeName(scope) + " metadata of " + domain);
  return {};
}

}  // namespace vcpufold::hostd
