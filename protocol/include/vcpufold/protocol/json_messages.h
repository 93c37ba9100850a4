// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// nlohmann/json conversions for the message structs. The body of each message
// only; "v" and "type" are the codec's. from_json range-checks every field and
// throws FieldError naming it; the codec turns that into a DecodeError.
// Prefer codec.h: these exist for the codec and for tests.

#include <nlohmann/json_fwd.hpp>
#include <stdexcept>
#include <string>

#include "vcpufold/protocol/messages.h"

namespace vcpufold::protocol {

class FieldError : public std::runtime_error {
 public:
  FieldError(std::string field, const std::string& reason)
      : std::runtime_error(reason), field_(std::move(field)) {}
  [[nodiscard]] const std::string& field() const { return field_; }

 private:
  std::string field_;
};

void to_json(nlohmann::json& json, const Hello& message);
void from_json(const nlohmann::json& json, Hello& message);
void to_json(nlohmann::json& json, const Hint& message);
void from_json(const nlohmann::json& json, Hint& message);
void to_json(nlohmann::json& json, const Ack& message);
void from_json(const nlohmann::json& json, Ack& message);
void to_json(nlohmann::json& json, const Status& message);
void from_json(const nlohmann::json& json, Status& message);
void to_json(nlohmann::json& json, const ErrorMessage& message);
void from_json(const nlohmann::json& json, ErrorMessage& message);

}  // namespace vcpufold::protocol
