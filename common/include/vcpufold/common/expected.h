// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Expected<T>: the one error style for operations that can fail at run time.
// Either a value or an Error whose message says what failed and, through
// withContext(), where ("agent.toml: fallback.interval_ms: ...").

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace vcpufold {

struct Error {
  std::string message;

  // Returns this error prefixed with "context: ".
  [[nodiscard]] Error withContext(const std::string& context) const {
    return Error{context + ": " + message};
  }
  friend bool operator==(const Error&, const Error&) = default;
};

template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}          // NOLINT: implicit by design
  Expected(Error error) : state_(std::move(error)) {}      // NOLINT: implicit by design

  [[nodiscard]] bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(state_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(state_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(state_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  [[nodiscard]] const Error& error() const {
    assert(!ok());
    return std::get<1>(state_);
  }

 private:
  std::variant<T, Error> state_;
};

// Expected<void>: success carries nothing.
template <>
class [[nodiscard]] Expected<void> {
 public:
  Expected() = default;
  Expected(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit by design

  [[nodiscard]] bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  [[nodiscard]] const Error& error() const {
    assert(!ok_);
    return error_;
  }

 private:
  Error error_;
  bool ok_ = true;
};

inline Error makeError(std::string message) { return Error{std::move(message)}; }

}  // namespace vcpufold
