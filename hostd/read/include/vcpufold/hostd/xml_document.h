// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// libxml2 documents parsed from text hostd does not trust (domain XML, policy
// metadata a guest's owner may have written): one parse with the same safe
// options, one owner that frees them.

#include <libxml/tree.h>

#include <memory>
#include <string>
#include <string_view>

namespace vcpufold::hostd {

struct XmlDocumentDeleter {
  void operator()(xmlDoc* document) const { xmlFreeDoc(document); }
};
using XmlDocument = std::unique_ptr<xmlDoc, XmlDocumentDeleter>;

// No network, no entity substitution (libxml2's default keeps entities
// unexpanded), nothing printed on stderr. Null when not well-formed;
// xmlGetLastError() says why. name appears in libxml2's own errors.
XmlDocument parseXmlDocument(std::string_view text, const char* name);

// The text of a string libxml2 allocated for the caller, which it frees ("" for null).
std::string takeXmlString(xmlChar* value);

}  // namespace vcpufold::hostd
