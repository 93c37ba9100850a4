// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/protocol/frame_decoder.h"

#include <gtest/gtest.h>

#include <vector>

#include "vcpufold/protocol/limits.h"

using vcpufold::protocol::Frame;
using vcpufold::protocol::FrameDecoder;
using vcpufold::protocol::kMaxFrameBytes;

namespace {

std::vector<Frame> drain(FrameDecoder& decoder) {
  std::vector<Frame> frames;
  while (auto frame = decoder.next()) frames.push_back(*frame);
  return frames;
}

Frame line(std::string text) { return Frame{Frame::Kind::Line, std::move(text)}; }
Frame oversized() { return Frame{Frame::Kind::Oversized, {}}; }

}  // namespace

TEST(FrameDecoder, SplitAtEveryByteOffset) {
  const std::string stream = "{\"v\":1,\"type\":\"hint\"}\n{\"a\":[1,2]}\n\xff{\"b\":2}\n";
  const std::vector<Frame> expected{line("{\"v\":1,\"type\":\"hint\"}"), line("{\"a\":[1,2]}"), line("{\"b\":2}")};
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    FrameDecoder decoder;
    std::vector<Frame> frames;
    decoder.feed(std::string_view(stream).substr(0, cut));
    for (auto& frame : drain(decoder)) frames.push_back(frame);
    decoder.feed(std::string_view(stream).substr(cut));
    for (auto& frame : drain(decoder)) frames.push_back(frame);
    EXPECT_EQ(frames, expected) << "cut at " << cut;
  }
}

TEST(FrameDecoder, ByteByByte) {
  const std::string stream = "abc\ndef\n";
  FrameDecoder decoder;
  std::vector<Frame> frames;
  for (char c : stream) {
    decoder.feed(std::string_view(&c, 1));
    for (auto& frame : drain(decoder)) frames.push_back(frame);
  }
  EXPECT_EQ(frames, (std::vector<Frame>{line("abc"), line("def")}));
}

TEST(FrameDecoder, ThousandLinesInOneFeed) {
  std::string stream;
  for (int i = 0; i < 1000; ++i) stream += "{\"n\":" + std::to_string(i) + "}\n";
  FrameDecoder decoder;
  decoder.feed(stream);
  const auto frames = drain(decoder);
  ASSERT_EQ(frames.size(), 1000u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(frames[static_cast<std::size_t>(i)].text, "{\"n\":" + std::to_string(i) + "}");
  EXPECT_EQ(decoder.stats().lines, 1000u);
  EXPECT_EQ(decoder.bufferedBytes(), 0u);
}

TEST(FrameDecoder, ResyncByteMidLineDiscardsThePartialLine) {
  FrameDecoder decoder;
  decoder.feed("{\"half\":\xff{\"whole\":1}\n");
  EXPECT_EQ(drain(decoder), (std::vector<Frame>{line("{\"whole\":1}")}));
  EXPECT_EQ(decoder.stats().resets, 1u);
}

TEST(FrameDecoder, ResyncByteAcrossFeeds) {
  FrameDecoder decoder;
  decoder.feed("garbage-without-newline");
  EXPECT_TRUE(drain(decoder).empty());
  decoder.feed("\xff");
  decoder.feed("ok\n");
  EXPECT_EQ(drain(decoder), (std::vector<Frame>{line("ok")}));
}

TEST(FrameDecoder, NulBytesAreOrdinaryBytes) {
  FrameDecoder decoder;
  const std::string withNul("a\0b\n", 4);
  decoder.feed(withNul);
  EXPECT_EQ(drain(decoder), (std::vector<Frame>{line(std::string("a\0b", 3))}));
}

TEST(FrameDecoder, EmptyLinesAreSkipped) {
  FrameDecoder decoder;
  decoder.feed("\n\n{}\n\n");
  EXPECT_EQ(drain(decoder), (std::vector<Frame>{line("{}")}));
}

TEST(FrameDecoder, LimitCountsTheNewline) {
  FrameDecoder decoder;
  const std::string longest(kMaxFrameBytes - 1, 'x');
  decoder.feed(longest + "\n");
  EXPECT_EQ(drain(decoder), (std::vector<Frame>{line(longest)}));

  const std::string tooLong(kMaxFrameBytes, 'y');
  decoder.feed(tooLong + "\nnext\n");
  EXPECT_EQ(drain(decoder), (std::vector<Frame>{oversized(), line("next")}));
  EXPECT_EQ(decoder.stats().oversized, 1u);
}

TEST(FrameDecoder, OneMebibyteLineStaysBounded) {
  FrameDecoder decoder;
  const std::string chunk(4096, 'z');
  std::size_t maxHeld = 0;
  std::vector<Frame> frames;
  for (int i = 0; i < 256; ++i) {
    decoder.feed(chunk);
    for (auto& frame : drain(decoder)) frames.push_back(frame);
    maxHeld = std::max(maxHeld, decoder.heldBytes());
  }
  decoder.feed("\n{\"after\":1}\n");
  for (auto& frame : drain(decoder)) frames.push_back(frame);
  EXPECT_EQ(frames, (std::vector<Frame>{oversized(), line("{\"after\":1}")}));
  // One chunk of input plus at most one frame's worth, whatever the line's length.
  EXPECT_LE(maxHeld, 3 * kMaxFrameBytes);
}

TEST(FrameDecoder, OneMebibyteInOneFeedIsReleasedAfterDraining) {
  FrameDecoder decoder;
  std::string burst(1 << 20, 'q');
  burst += "\n{}\n";
  decoder.feed(burst);
  EXPECT_EQ(drain(decoder), (std::vector<Frame>{oversized(), line("{}")}));
  EXPECT_EQ(decoder.bufferedBytes(), 0u);
  EXPECT_LE(decoder.heldBytes(), 64u * 1024u + kMaxFrameBytes);
}

TEST(FrameDecoder, ResyncEndsDroppingAnOversizedLine) {
  FrameDecoder decoder;
  decoder.feed(std::string(kMaxFrameBytes + 10, 'x'));
  decoder.feed("\xff{\"ok\":1}\n");
  EXPECT_EQ(drain(decoder), (std::vector<Frame>{oversized(), line("{\"ok\":1}")}));
}

TEST(FrameDecoder, ResetForgetsPartialInput) {
  FrameDecoder decoder;
  decoder.feed("partial");
  EXPECT_TRUE(drain(decoder).empty());
  EXPECT_EQ(decoder.bufferedBytes(), 7u);
  decoder.reset();
  EXPECT_EQ(decoder.bufferedBytes(), 0u);
  decoder.feed("fresh\n");
  EXPECT_EQ(drain(decoder), (std::vector<Frame>{line("fresh")}));
}

TEST(FrameDecoder, ReopenDropsTheTailOfAnEarlierSessionUpToANewline) {
  FrameDecoder decoder;
  decoder.feed("{\"half\":");
  decoder.reopen();
  decoder.feed("tail of an old line}\n{\"v\":1}\n");
  EXPECT_EQ(decoder.next(), (Frame{Frame::Kind::Line, "{\"v\":1}"}));
  EXPECT_EQ(decoder.next(), std::nullopt);
  EXPECT_EQ(decoder.stats().oversized, 0u);
}

TEST(FrameDecoder, ReopenEndsDroppingAtTheResyncByte) {
  FrameDecoder decoder;
  decoder.reopen();
  decoder.feed("\xFF{\"v\":1}\n");
  EXPECT_EQ(decoder.next(), (Frame{Frame::Kind::Line, "{\"v\":1}"}));
}

TEST(FrameDecoder, ReopenDropsAShortTailAcrossFeeds) {
  FrameDecoder decoder;
  decoder.reopen();
  decoder.feed("old ");
  EXPECT_EQ(decoder.next(), std::nullopt);
  decoder.feed("tail\n{}\n");
  EXPECT_EQ(decoder.next(), (Frame{Frame::Kind::Line, "{}"}));
  EXPECT_EQ(decoder.stats().oversized, 0u);
}

TEST(FrameDecoder, ATailLongerThanAFrameIsReportedOversized) {
  FrameDecoder decoder;
  decoder.reopen();
  decoder.feed(std::string(kMaxFrameBytes + 10, 'x') + "\n{}\n");
  EXPECT_EQ(decoder.next(), (Frame{Frame::Kind::Oversized, {}}));
  EXPECT_EQ(decoder.next(), (Frame{Frame::Kind::Line, "{}"}));
  EXPECT_EQ(decoder.stats().oversized, 1u);
}
