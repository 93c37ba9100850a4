// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/policy_xml.h"
#include "vcpufold/hostd/xml_document.h"

namespace vcpufold::hostd {
namespace {

std::string text(const xmlChar* value) { return value ? reinterpret_cast<const char*>(value) : ""; }

Expected<std::uint32_t> number(const std::string& attribute, const std::string& value) {
  if (value.empty() || value.size() > 6 || value.find_first_not_of("0123456789") != std::string::npos)
    return Error{attribute + "=\"" + value + "\" is not a whole number"};
  return static_cast<std::uint32_t>(std::stoul(value));
}

}  // namespace

Expected<FoldPolicy> parsePolicyXml(std::string_view xml) {
  if (xml.size() > 4096) return Error{"policy element larger than 4096 bytes"};
  const XmlDocument document = parseXmlDocument(xml, "policy.xml");
  if (!document) {
    const xmlError* error = xmlGetLastError();
    std::string why = error && error->message ? error->message : "malformed";
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return Error{"not well-formed XML: " + why};
  }
  const xmlNode* root = xmlDocGetRootElement(document.get());
  if (!root || text(root->name) != "policy")
    return Error{"expected a <policy> element, got <" + (root ? text(root->name) : std::string()) + ">"};
  if (root->ns && text(root->ns->href) != kPolicyNamespace)
    return Error{"namespace " + text(root->ns->href) + " is not " + kPolicyNamespace};
  for (const xmlNode* child = root->children; child; child = child->next)
    if (child->type == XML_ELEMENT_NODE) return Error{"<policy> takes no child elements"};

  FoldPolicy policy;
  for (const xmlAttr* attribute = root->properties; attribute; attribute = attribute->next) {
    const std::string name = text(attribute->name);
    const std::string value = takeXmlString(xmlNodeListGetString(document.get(), attribute->children, 1));
    if (name == "mode") {
      auto mode = foldModeFromName(value);
      if (!mode) return Error{"mode=\"" + value + "\" is not one of auto, off, fixed, guest"};
      policy.mode = *mode;
      continue;
    }
    std::optional<std::uint32_t>* target = nullptr;
    if (name == "max-vcpus") target = &policy.maxVcpus;
    if (name == "vcpus") target = &policy.fixedVcpus;
    if (name == "weight") target = &policy.weight;
    if (name != "min-vcpus" && !target) return Error{"unknown attribute " + name};
    auto parsed = number(name, value);
    if (!parsed) return parsed.error();
    if (target)
      *target = *parsed;
    else
      policy.minVcpus = *parsed;
  }
  if (auto valid = validatePolicy(policy); !valid) return valid.error();
  return policy;
}

}  // namespace vcpufold::hostd
