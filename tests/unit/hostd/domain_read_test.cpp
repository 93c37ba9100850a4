// SPDX-License-Identifier: GPL-2.0-or-later
// keepLastKnown and keepAfterFailedLookup: a libvirt call that fails once is
// not a fact about the VM.

#include "vcpufold/hostd/domain_read.h"

#include <gtest/gtest.h>

using namespace vcpufold::hostd;
using std::chrono::seconds;

namespace {

VmRecord known() {
  VmRecord vm;
  vm.name = "web";
  vm.vcpus = 4;
  vm.channelSocket = "/run/libvirt/qemu/channel/1-web/org.vcpufold.hint.0";
  vm.partition = "/machine/batch";
  vm.placement.source = "libvirt vcpupin";
  return vm;
}

// What readDomain makes of a domain whose calls failed: 0 vCPUs, no channel.
VmRecord readWith(const DomainReadGaps& gaps) {
  VmRecord vm;
  vm.name = "web";
  vm.vcpus = gaps.info ? 0 : 4;
  if (gaps.xml) vm.channelProblem = "cannot read the live XML: libvirtd is busy";
  return vm;
}

}  // namespace

TEST(DomainRead, AFailedInfoReadKeepsTheLastVcpuCountNotZero) {
  const VmRecord before = known();
  const auto outcome = keepLastKnown(readWith({true, false}), {true, false}, &before, seconds(0));
  ASSERT_TRUE(outcome.record);
  EXPECT_EQ(outcome.record->vcpus, 4u) << "0 vCPUs would be hinted 1";
  EXPECT_EQ(outcome.record->placement.source, "libvirt vcpupin");
  ASSERT_EQ(outcome.notes.size(), 1u);
  EXPECT_EQ(outcome.notes[0], "cannot read its vCPU count: keeping 4");
}

TEST(DomainRead, AFailedXmlReadKeepsTheChannel) {
  const VmRecord before = known();
  const auto outcome = keepLastKnown(readWith({false, true}), {false, true}, &before, seconds(5));
  ASSERT_TRUE(outcome.record);
  EXPECT_EQ(outcome.record->channelSocket, before.channelSocket);
  EXPECT_FALSE(outcome.record->channelProblem);
  EXPECT_EQ(outcome.record->partition, "/machine/batch");
}

TEST(DomainRead, ANewVmIsNotCountedUntilItsVcpuCountIsRead) {
  const auto outcome = keepLastKnown(readWith({true, false}), {true, false}, nullptr, seconds(0));
  EXPECT_FALSE(outcome.record);
  ASSERT_EQ(outcome.notes.size(), 1u);
  EXPECT_NE(outcome.notes[0].find("not counted"), std::string::npos);
  // A new VM whose XML cannot be read has no usable channel: not hinted.
  const auto noXml = keepLastKnown(readWith({false, true}), {false, true}, nullptr, seconds(0));
  ASSERT_TRUE(noXml.record);
  EXPECT_TRUE(noXml.record->channelProblem);
  EXPECT_FALSE(noXml.record->channelSocket);
}

TEST(DomainRead, PastTheHoldAFailureCounts) {
  const VmRecord before = known();
  const auto info = keepLastKnown(readWith({true, false}), {true, false}, &before, kLastKnownHold);
  EXPECT_FALSE(info.record) << "dropped: its hint stops and the guest unfolds";
  const auto xml = keepLastKnown(readWith({false, true}), {false, true}, &before, kLastKnownHold + seconds(1));
  ASSERT_TRUE(xml.record);
  EXPECT_FALSE(xml.record->channelSocket);
  EXPECT_TRUE(xml.record->channelProblem);
}

TEST(DomainRead, OnlyNoSuchDomainErasesAVmAtOnce) {
  EXPECT_FALSE(keepAfterFailedLookup(true, seconds(0)));
  EXPECT_TRUE(keepAfterFailedLookup(false, seconds(0)));
  EXPECT_TRUE(keepAfterFailedLookup(false, kLastKnownHold - seconds(1)));
  EXPECT_FALSE(keepAfterFailedLookup(false, kLastKnownHold));
}
