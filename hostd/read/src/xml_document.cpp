// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/xml_document.h"

#include <libxml/parser.h>

namespace vcpufold::hostd {

XmlDocument parseXmlDocument(std::string_view text, const char* name) {
  return XmlDocument(xmlReadMemory(text.data(), static_cast<int>(text.size()), name, nullptr,
                                   XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING));
}

std::string takeXmlString(xmlChar* value) {
  std::string text = value ? reinterpret_cast<const char*>(value) : "";
  xmlFree(value);
  return text;
}

}  // namespace vcpufold::hostd
