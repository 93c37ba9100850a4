// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/protocol/codec.h"

#include <nlohmann/json.hpp>
#include <set>

#include "vcpufold/protocol/json_messages.h"
#include "vcpufold/protocol/limits.h"
#include "vcpufold/protocol/version.h"

namespace vcpufold::protocol {
namespace {

using nlohmann::json;

struct DuplicateKey {
  std::string key;
};

// Parser errors quote the peer's bytes; keep what we log or send back printable.
std::string printable(std::string_view text, std::size_t maxBytes = 160) {
  std::string out;
  for (char c : text.substr(0, maxBytes)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

// Rejects deep nesting before the parser sees it, so a hostile frame costs
// one linear scan and no recursion anywhere.
bool nestingWithin(std::string_view frame, std::size_t maxDepth) {
  std::size_t depth = 0;
  bool inString = false;
  bool escaped = false;
  for (char c : frame) {
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '{' || c == '[') {
      if (++depth > maxDepth) return false;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return true;
}

template <typename T>
Message decodeBody(const json& object) {
  return object.get<T>();
}

using BodyDecoder = Message (*)(const json&);
constexpr std::pair<const char*, BodyDecoder> kBodyDecoders[] = {
    {"hello", &decodeBody<Hello>}, {"hint", &decodeBody<Hint>},         {"ack", &decodeBody<Ack>},
    {"status", &decodeBody<Status>}, {"error", &decodeBody<ErrorMessage>},
};

}  // namespace

std::string DecodeError::describe() const { return field.empty() ? reason : field + ": " + reason; }

const char* messageTypeName(const Message& message) {
  return kBodyDecoders[message.index()].first;
}

DecodeResult decodeMessage(std::string_view frame) {
  if (frame.size() >= kMaxFrameBytes)
    return DecodeError{"", "frame of " + std::to_string(frame.size()) + " bytes exceeds the limit", {}, {}};
  if (!nestingWithin(frame, kMaxJsonDepth))
    return DecodeError{"", "nesting deeper than " + std::to_string(kMaxJsonDepth), {}, {}};

  json object;
  try {
    std::vector<std::set<std::string>> keysByObject;
    object = json::parse(frame.begin(), frame.end(),
                         [&keysByObject](int, json::parse_event_t event, json& parsed) {
                           if (event == json::parse_event_t::object_start) {
                             keysByObject.emplace_back();
                           } else if (event == json::parse_event_t::object_end) {
                             keysByObject.pop_back();
                           } else if (event == json::parse_event_t::key && !keysByObject.empty()) {
                             auto key = parsed.get<std::string>();
                             if (!keysByObject.back().insert(key).second) throw DuplicateKey{key};
                           }
                           return true;
                         });
  } catch (const DuplicateKey& duplicate) {
    return DecodeError{"", "duplicate key \"" + printable(duplicate.key) + "\"", {}, {}};
  } catch (const json::exception& error) {
    return DecodeError{"", "not valid JSON: " + printable(error.what()), {}, {}};
  }
  if (!object.is_object()) return DecodeError{"", "not a JSON object", {}, {}};

  DecodeError context;
  if (auto seq = object.find("seq"); seq != object.end() && seq->is_number_unsigned()) {
    const auto value = seq->get<std::uint64_t>();
    if (value >= 1 && value <= kMaxSeq) context.seq = value;
  }
  auto fail = [&context](std::string field, std::string reason) {
    context.field = std::move(field);
    context.reason = std::move(reason);
    return context;
  };

  const auto type = object.find("type");
  if (type == object.end()) return fail("type", "missing");
  if (!type->is_string()) return fail("type", "expected a string");
  const auto& typeName = type->get_ref<const std::string&>();
  BodyDecoder decodeBodyOfType = nullptr;
  for (const auto& [name, decoder] : kBodyDecoders)
    if (typeName == name) decodeBodyOfType = decoder;
  if (!decodeBodyOfType) return fail("type", "unknown message type \"" + printable(typeName, 32) + "\"");
  context.type = typeName;

  const auto version = object.find("v");
  if (version == object.end()) return fail("v", "missing");
  if (!version->is_number_unsigned()) return fail("v", "expected an unsigned integer");
  const auto versionNumber = version->get<std::uint64_t>();
  if (versionNumber > 65535 || !isSupportedVersion(static_cast<std::uint32_t>(versionNumber)))
    return fail("v", "unsupported protocol version " + std::to_string(versionNumber));

  try {
    return Decoded{static_cast<std::uint32_t>(versionNumber), decodeBodyOfType(object)};
  } catch (const FieldError& error) {
    return fail(error.field(), printable(error.what(), 200));
  } catch (const json::exception& error) {
    return fail(typeName, printable(error.what(), 200));
  }
}

Expected<std::string> encodeMessage(const Message& message, std::uint32_t version) {
  const bool isHello = std::holds_alternative<Hello>(message);
  json object;
  std::visit([&object](const auto& body) { to_json(object, body); }, message);
  object["v"] = isHello ? kHelloVersion : version;
  object["type"] = messageTypeName(message);
  // Strings from our structs may hold invalid UTF-8; replace it rather than throw.
  std::string line = object.dump(-1, ' ', false, json::error_handler_t::replace);

  const std::string what = std::string("cannot encode ") + messageTypeName(message);
  const auto readBack = decodeMessage(line);
  if (!readBack) return Error{what + ": " + readBack.error().describe()};
  if (readBack.value().message != message) return Error{what + ": does not read back the same"};
  line += '\n';
  return line;
}

}  // namespace vcpufold::protocol
