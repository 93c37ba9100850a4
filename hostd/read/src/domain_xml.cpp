// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/domain_xml.h"

#include <cstring>

#include "vcpufold/hostd/xml_document.h"

namespace vcpufold::hostd {
namespace {

bool named(const xmlNode* node, const char* name) {
  return node->type == XML_ELEMENT_NODE && std::strcmp(reinterpret_cast<const char*>(node->name), name) == 0;
}

std::string attribute(const xmlNode* node, const char* name) {
  return takeXmlString(xmlGetProp(node, reinterpret_cast<const xmlChar*>(name)));
}

const xmlNode* child(const xmlNode* node, const char* name) {
  for (const xmlNode* c = node->children; c; c = c->next)
    if (named(c, name)) return c;
  return nullptr;
}

}  // namespace

Expected<std::optional<DomainChannel>> findHintChannel(std::string_view domainXml) {
  const XmlDocument document = parseXmlDocument(domainXml, "domain.xml");
  if (!document) return Error{"domain XML is not well-formed"};
  const xmlNode* domain = xmlDocGetRootElement(document.get());
  if (!domain || !named(domain, "domain")) return Error{"not a <domain> document"};
  const xmlNode* devices = child(domain, "devices");
  if (!devices) return std::optional<DomainChannel>{};
  for (const xmlNode* channel = devices->children; channel; channel = channel->next) {
    if (!named(channel, "channel") || attribute(channel, "type") != "unix") continue;
    const xmlNode* target = child(channel, "target");
    if (!target || attribute(target, "type") != "virtio" || attribute(target, "name") != kHintPortName) continue;
    const xmlNode* source = child(channel, "source");
    const std::string path = source ? attribute(source, "path") : "";
    if (path.empty()) return Error{"channel org.vcpufold.hint.0 has no socket path (is the domain running?)"};
    // hostd connects only to a socket QEMU itself serves (mode='bind', the
    // default). With mode='connect' QEMU is the client of someone else's
    // socket, and the path could name any service on the host.
    if (const std::string mode = attribute(source, "mode"); mode != "bind")
      return Error{"channel org.vcpufold.hint.0 has source mode='" + mode +
                   "': hostd connects only to a socket QEMU serves (mode='bind')"};
    return std::optional<DomainChannel>{DomainChannel{path, attribute(target, "state")}};
  }
  return std::optional<DomainChannel>{};
}

DomainFacts readDomainFacts(std::string_view domainXml) {
  DomainFacts facts;
  const XmlDocument document = parseXmlDocument(domainXml, "domain.xml");
  if (!document) return facts;
  const xmlNode* domain = xmlDocGetRootElement(document.get());
  if (!domain || !named(domain, "domain")) return facts;
  if (const xmlNode* resource = child(domain, "resource"))
    if (const xmlNode* partition = child(resource, "partition"))
      if (std::string text = takeXmlString(xmlNodeGetContent(partition)); !text.empty()) facts.partition = text;
  constexpr std::string_view kNovaNamespace = "http://openstack.org/xmlns/libvirt/nova/";
  const auto isNova = [&](const xmlNode* node) {
    return node->ns && node->ns->href &&
           std::string_view(reinterpret_cast<const char*>(node->ns->href)).substr(0, kNovaNamespace.size()) ==
               kNovaNamespace;
  };
  if (const xmlNode* metadata = child(domain, "metadata"))
    for (const xmlNode* instance = metadata->children; instance; instance = instance->next)
      if (named(instance, "instance") && isNova(instance))
        for (const xmlNode* flavor = instance->children; flavor; flavor = flavor->next)
          if (named(flavor, "flavor") && isNova(flavor))
            if (std::string name = attribute(flavor, "name"); !name.empty()) facts.novaFlavor = name;
  return facts;
}

}  // namespace vcpufold::hostd
