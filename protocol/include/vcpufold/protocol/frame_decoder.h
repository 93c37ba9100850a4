// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// FrameDecoder: splits an untrusted byte stream into newline-terminated frames.
// Pure (no I/O). feed() only appends; next() does the work, so memory is the
// bytes fed and not yet drained plus at most one partial frame (kMaxFrameBytes).
// Callers drain next() after every feed().
//
// - A frame longer than kMaxFrameBytes (newline included) is reported once as
//   Oversized when it crosses the limit, and its bytes are dropped up to and
//   including its newline; nothing of it is buffered.
// - kResyncByte (0xFF) discards the partial frame (and ends dropping).
// - Empty lines are skipped.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vcpufold::protocol {

struct Frame {
  enum class Kind { Line, Oversized };
  Kind kind = Kind::Line;
  std::string text;  // Line: the frame without its '\n'; Oversized: empty
  friend bool operator==(const Frame&, const Frame&) = default;
};

struct FrameDecoderStats {
  std::uint64_t lines = 0;
  std::uint64_t oversized = 0;
  std::uint64_t resets = 0;
  std::uint64_t bytes = 0;
};

class FrameDecoder {
 public:
  void feed(std::string_view bytes);
  std::optional<Frame> next();
  // Forgets everything buffered.
  void reset();
  // As after the transport (re)opens (protocol.md section 3, step 1): forgets
  // everything buffered and drops what arrives up to the next newline or
  // 0xFF, since the first bytes may be the tail of an earlier session. A tail
  // of kMaxFrameBytes or more is reported as Oversized, like any long frame.
  void reopen();

  // Bytes held: fed-but-unread input plus the partial frame.
  [[nodiscard]] std::size_t bufferedBytes() const;
  // Memory allocated for buffering, what a hostile peer could make us hold.
  [[nodiscard]] std::size_t heldBytes() const;
  [[nodiscard]] const FrameDecoderStats& stats() const { return stats_; }

 private:
  std::string input_;        // fed bytes; input_[readPos_..] not yet scanned
  std::size_t readPos_ = 0;
  std::string partial_;      // current frame so far (< kMaxFrameBytes bytes)
  bool dropping_ = false;    // inside an oversized frame, skipping to its newline
  std::optional<std::size_t> tailBytes_;  // after reopen(): bytes of the earlier session's tail dropped so far
  FrameDecoderStats stats_;
};

}  // namespace vcpufold::protocol
