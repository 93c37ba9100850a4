// SPDX-License-Identifier: GPL-2.0-or-later
// Every example in docs/protocol.md is checked against the codec: frames in
// ```jsonl blocks must decode (and re-encode to the same message); frames in
// ```jsonl reject blocks must be refused with exactly the error shown after "=> ".

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "vcpufold/protocol/codec.h"

using namespace vcpufold::protocol;

namespace {

struct ExampleBlocks {
  std::vector<std::string> valid;
  std::vector<std::pair<std::string, std::string>> rejected;  // frame, expected error
};

ExampleBlocks readExamples() {
  std::ifstream file(std::string(VCPUFOLD_SOURCE_DIR) + "/docs/protocol.md");
  EXPECT_TRUE(file) << "docs/protocol.md not found";
  ExampleBlocks blocks;
  enum class Block { None, Valid, Reject, Other } block = Block::None;
  std::string line;
  std::string pendingReject;
  while (std::getline(file, line)) {
    if (line.rfind("```", 0) == 0) {
      if (block != Block::None) {
        EXPECT_TRUE(pendingReject.empty()) << "reject example without its error: " << pendingReject;
        block = Block::None;
      } else if (line == "```jsonl") {
        block = Block::Valid;
      } else if (line == "```jsonl reject") {
        block = Block::Reject;
      } else {
        block = Block::Other;
      }
      continue;
    }
    if (line.empty()) continue;
    if (block == Block::Valid) blocks.valid.push_back(line);
    if (block == Block::Reject) {
      if (line.rfind("=> ", 0) == 0) {
        blocks.rejected.emplace_back(pendingReject, line.substr(3));
        pendingReject.clear();
      } else {
        pendingReject = line;
      }
    }
  }
  return blocks;
}

}  // namespace

TEST(DocExamples, ValidExamplesDecodeAndReEncode) {
  const auto blocks = readExamples();
  ASSERT_GE(blocks.valid.size(), 10u) << "the spec lost its examples";
  for (const auto& frame : blocks.valid) {
    auto decoded = decodeMessage(frame);
    ASSERT_TRUE(decoded) << frame << "\n-> " << decoded.error().describe();
    auto line = encodeMessage(decoded.value().message, decoded.value().version);
    ASSERT_TRUE(line) << line.error().message;
    auto again = decodeMessage(std::string_view(*line).substr(0, line->size() - 1));
    ASSERT_TRUE(again);
    EXPECT_EQ(again.value().message, decoded.value().message) << frame;
  }
}

TEST(DocExamples, RejectExamplesFailWithTheDocumentedError) {
  const auto blocks = readExamples();
  ASSERT_GE(blocks.rejected.size(), 8u) << "the spec lost its reject examples";
  for (const auto& [frame, expected] : blocks.rejected) {
    auto decoded = decodeMessage(frame);
    ASSERT_FALSE(decoded) << "accepted: " << frame;
    EXPECT_EQ(decoded.error().describe(), expected) << frame;
  }
}
