// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/common/log_text.h"

#include <algorithm>
#include <cstdio>

namespace vcpufold {
namespace {

void appendHexByte(std::string& out, unsigned char byte) {
  char text[8];
  std::snprintf(text, sizeof text, "\\x%02X", byte);
  out += text;
}

void appendCodePoint(std::string& out, char32_t code) {
  char text[16];
  std::snprintf(text, sizeof text, "\\u{%04X}", static_cast<unsigned>(code));
  out += text;
}

// Code points a log viewer would act on instead of showing.
bool isInvisibleControl(char32_t code) {
  return code < 0x20 || code == 0x7F || (code >= 0x80 && code <= 0x9F) || (code >= 0x202A && code <= 0x202E) ||
         (code >= 0x2066 && code <= 0x2069) || code == 0x2028 || code == 0x2029;
}

// Length of the valid UTF-8 sequence at text[i] and its code point; 0 if invalid.
std::size_t decodeUtf8(std::string_view text, std::size_t i, char32_t& code) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  std::size_t length = 0;
  char32_t minimum = 0;
  if (lead < 0x80) {
    code = lead;
    return 1;
  }
  if ((lead & 0xE0) == 0xC0) {
    length = 2, code = lead & 0x1F, minimum = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, code = lead & 0x0F, minimum = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, code = lead & 0x07, minimum = 0x10000;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  // Overlong forms, surrogates and values past Unicode are not text.
  if (code < minimum || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

// Appends the escaped form of the character at text[i]; returns its input length.
std::size_t appendEscapedCharacter(std::string& out, std::string_view text, std::size_t i) {
  char32_t code = 0;
  const std::size_t length = decodeUtf8(text, i, code);
  if (length == 0) {
    appendHexByte(out, static_cast<unsigned char>(text[i]));
    return 1;
  }
  if (code == '\\') {
    out += "\\\\";
  } else if (isInvisibleControl(code)) {
    if (code < 0x80)
      appendHexByte(out, static_cast<unsigned char>(code));
    else
      appendCodePoint(out, code);
  } else {
    out.append(text.substr(i, length));
  }
  return length;
}

}  // namespace

std::string escapeForLog(std::string_view text, std::size_t maxBytes) {
  const bool cut = text.size() > maxBytes;
  if (cut) text = text.substr(0, maxBytes);
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) i += appendEscapedCharacter(out, text, i);
  if (cut) out += "...";
  return out;
}

std::string escapeWithin(std::string_view text, std::size_t maxBytes) {
  constexpr std::string_view kCut = "...";
  // Most text (hostd's own reasons, a thousand hints a tick) is printable
  // ASCII that fits: as it is.
  if (text.size() <= maxBytes &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f && c != '\\'; }))
    return std::string(text);
  std::string out;
  out.reserve(maxBytes + 8);
  // Escaping never shortens text, so only text within the limit may fit whole.
  if (text.size() <= maxBytes) {
    for (std::size_t i = 0; i < text.size();) i += appendEscapedCharacter(out, text, i);
    if (out.size() <= maxBytes) return out;
    out.clear();
  }
  if (maxBytes < kCut.size()) return out;
  // Whole characters (an escape is one) until the mark of the cut would not fit.
  const std::size_t room = maxBytes - kCut.size();
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t before = out.size();
    i += appendEscapedCharacter(out, text, i);
    if (out.size() > room) {
      out.resize(before);
      break;
    }
  }
  return out += kCut;
}

}  // namespace vcpufold
