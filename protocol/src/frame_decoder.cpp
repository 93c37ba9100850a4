// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/protocol/frame_decoder.h"

#include "vcpufold/protocol/limits.h"

namespace vcpufold::protocol {
namespace {
constexpr std::size_t kRetainedInputBytes = 64 * 1024;
}  // namespace

void FrameDecoder::feed(std::string_view bytes) {
  stats_.bytes += bytes.size();
  if (readPos_ == input_.size()) {
    input_.clear();
    readPos_ = 0;
  }
  input_.append(bytes);
}

std::optional<Frame> FrameDecoder::next() {
  static constexpr char kDelimiters[] = {'\n', kResyncByte};
  const std::string_view delimiters(kDelimiters, sizeof kDelimiters);
  while (readPos_ < input_.size()) {
    const std::string_view rest = std::string_view(input_).substr(readPos_);
    const std::size_t hit = rest.find_first_of(delimiters);
    const std::string_view chunk = rest.substr(0, hit == std::string_view::npos ? rest.size() : hit);

    if (tailBytes_) {
      // After a reopen: the tail of an earlier line is dropped without a
      // report, but a "tail" longer than any frame is an oversized frame.
      *tailBytes_ += chunk.size();
      if (*tailBytes_ >= kMaxFrameBytes) {
        tailBytes_.reset();
        dropping_ = true;
        ++stats_.oversized;
        readPos_ += chunk.size();
        return Frame{Frame::Kind::Oversized, {}};
      }
      readPos_ += chunk.size();
      if (hit == std::string_view::npos) break;
      ++readPos_;
      tailBytes_.reset();
      dropping_ = false;
      continue;
    }
    if (!dropping_) {
      // The newline counts towards the limit, so the content may hold one byte less.
      if (partial_.size() + chunk.size() >= kMaxFrameBytes) {
        dropping_ = true;
        partial_.clear();
        ++stats_.oversized;
        readPos_ += chunk.size();
        return Frame{Frame::Kind::Oversized, {}};
      }
      partial_.append(chunk);
    }
    readPos_ += chunk.size();
    if (hit == std::string_view::npos) break;

    const char delimiter = rest[hit];
    ++readPos_;
    if (delimiter == kResyncByte) {
      ++stats_.resets;
      partial_.clear();
      dropping_ = false;
      continue;
    }
    if (dropping_) {
      dropping_ = false;
      continue;
    }
    if (partial_.empty()) continue;
    ++stats_.lines;
    Frame frame{Frame::Kind::Line, std::move(partial_)};
    partial_.clear();
    return frame;
  }
  if (readPos_ == input_.size()) {
    readPos_ = 0;
    // A burst (say one 1 MiB read) must not pin its buffer for the session's life.
    if (input_.capacity() > kRetainedInputBytes)
      std::string().swap(input_);
    else
      input_.clear();
  }
  return std::nullopt;
}

void FrameDecoder::reset() {
  input_.clear();
  input_.shrink_to_fit();
  readPos_ = 0;
  partial_.clear();
  dropping_ = false;
  tailBytes_.reset();
}

void FrameDecoder::reopen() {
  reset();
  tailBytes_ = 0;
}

std::size_t FrameDecoder::bufferedBytes() const { return (input_.size() - readPos_) + partial_.size(); }

std::size_t FrameDecoder::heldBytes() const { return input_.capacity() + partial_.capacity(); }

}  // namespace vcpufold::protocol
