// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Text codec for one frame: a JSON object on one line.
//
// decodeMessage is strict: one JSON object, nesting at most kMaxJsonDepth,
// no duplicate keys, a supported "v", a known "type", every required field
// present with the right JSON type and within its range, strings valid UTF-8
// without control characters. Unknown fields are ignored. The error names
// the field ("hint.vcpus: 0 is out of range 1..4096").
//
// encodeMessage never yields a line the decoder would refuse or read back
// differently: it decodes its own output and returns an error instead.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "vcpufold/common/expected.h"
#include "vcpufold/protocol/messages.h"

namespace vcpufold::protocol {

struct DecodeError {
  std::string field;   // "hint.vcpus", "v", "type", "" for the whole frame
  std::string reason;  // what is wrong with it
  // Whatever could be read before failing, so the reply can refer to it.
  std::optional<std::string> type;
  std::optional<std::uint64_t> seq;

  [[nodiscard]] std::string describe() const;  // "hint.vcpus: 0 is out of range 1..4096"
};

struct Decoded {
  std::uint32_t version = 0;
  Message message;
};

// Either a message or why the frame was refused.
class DecodeResult {
 public:
  DecodeResult(Decoded decoded) : value_(std::move(decoded)) {}  // NOLINT: implicit by design
  DecodeResult(DecodeError error) : value_(std::move(error)) {}  // NOLINT: implicit by design
  [[nodiscard]] bool ok() const { return value_.index() == 0; }
  explicit operator bool() const { return ok(); }
  [[nodiscard]] const Decoded& value() const { return std::get<0>(value_); }
  [[nodiscard]] const DecodeError& error() const { return std::get<1>(value_); }

 private:
  std::variant<Decoded, DecodeError> value_;
};

DecodeResult decodeMessage(std::string_view frame);

// The frame for message, '\n' included. hello is always written as
// kHelloVersion; version applies to every other type.
Expected<std::string> encodeMessage(const Message& message, std::uint32_t version);

}  // namespace vcpufold::protocol
