// Fuzzes what a guest (or a host) can send: the frame decoder, the message
// decoder behind it, and the cpulist parser. Beyond "no crash, no leak, no UB"
// it checks the codec's promises: every accepted message re-encodes, the
// re-encoded frame fits the limit and reads back the same.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "vcpufold/protocol/codec.h"
#include "vcpufold/protocol/cpulist.h"
#include "vcpufold/protocol/frame_decoder.h"
#include "vcpufold/protocol/limits.h"

using namespace vcpufold::protocol;

namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

void checkMessage(std::string_view text) {
  const auto decoded = decodeMessage(text);
  if (!decoded) {
    check(!decoded.error().reason.empty());
    return;
  }
  const auto line = encodeMessage(decoded.value().message, decoded.value().version);
  check(line.ok());
  check(line->size() <= kMaxFrameBytes && line->back() == '\n');
  const auto again = decodeMessage(std::string_view(*line).substr(0, line->size() - 1));
  check(again.ok() && again.value().message == decoded.value().message);
}

void checkCpuList(std::string_view text) {
  const auto cpus = parseCpuList(text);
  if (!cpus) return;
  const std::string canonical = formatCpuList(*cpus);
  const auto again = parseCpuList(canonical);
  check(again.ok() && *again == *cpus);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);

  // The first byte picks a split point so frames also arrive in two pieces.
  FrameDecoder decoder;
  const std::size_t split = size == 0 ? 0 : static_cast<std::size_t>(data[0]) % (size + 1);
  std::size_t frames = 0;
  for (std::string_view piece : {bytes.substr(0, split), bytes.substr(split)}) {
    decoder.feed(piece);
    while (auto frame = decoder.next()) {
      ++frames;
      if (frame->kind == Frame::Kind::Line) {
        check(frame->text.size() < kMaxFrameBytes);
        checkMessage(frame->text);
      }
    }
    check(decoder.bufferedBytes() < kMaxFrameBytes);
  }
  check(frames <= size);

  // Whole input as one frame, and as a cpulist.
  checkMessage(bytes);
  checkCpuList(bytes);
  return 0;
}
