// SPDX-License-Identifier: GPL-2.0-or-later
// Fuzzes what a guest (or a host) can send: the frame decoder, the message
// decoder behind it, both ends of a protocol session, and the cpulist parser. Beyond "no crash, no leak, no UB"
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
#include "vcpufold/protocol/session.h"

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

// Both ends of a session fed the bytes in two pieces, with time moving: what
// they write must be whole frames within the limit, and a host must never
// call an agent cooperative without a valid ack of a hint it sent.
void checkSessions(std::string_view first, std::string_view second) {
  const SessionTime start = SessionTime{} + std::chrono::hours(1);
  Session host(Hello{Role::Host, {1}, "fuzz", std::nullopt});
  Session agent(
      Hello{Role::Agent, {1}, "fuzz", AgentInfo{CpuSet{0, 1, 2, 3}, 2, 1, {Actuator::Cpuset}, CpuSet{0, 1, 2, 3}, std::nullopt, true}});
  host.setHint(Hint{0, 2, 3000, HintPolicy::Auto, "fuzz"}, start);
  host.open(start);
  agent.open(start);
  std::size_t written = 0;
  auto take = [&written](const SessionOutput& out) {
    for (const auto& frame : out.frames) {
      check(!frame.bytes.empty() && frame.bytes.back() == '\n' && frame.bytes.size() <= kMaxFrameBytes + 1);
      written += frame.bytes.size();
    }
  };
  SessionTime now = start;
  for (std::string_view piece : {first, second}) {
    take(host.feed(piece, now));
    take(agent.feed(piece, now));
    now += std::chrono::milliseconds(1500);
    take(host.tick(now));
    take(agent.tick(now));
  }
  check(!host.cooperative() || (host.lastAck() && host.ready()));
  check(host.stats().framesIn + host.stats().protocolErrors <= 2 * (first.size() + second.size()) + 2);
  (void)written;
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

  checkSessions(bytes.substr(0, split), bytes.substr(split));

  // Whole input as one frame, and as a cpulist.
  checkMessage(bytes);
  checkCpuList(bytes);
  return 0;
}
