// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/policy.h"
#include "vcpufold/hostd/policy_xml.h"

#include <gtest/gtest.h>

using namespace vcpufold::hostd;

TEST(Policy, ParsesWhatVirshStores) {
  // As libvirt returns it for our namespace (virDomainGetMetadata, VIR_DOMAIN_METADATA_ELEMENT).
  auto policy = parsePolicyXml(
      R"(<policy xmlns="https://vcpufold.org/xmlns/policy/1" mode="auto" min-vcpus="2" weight="200"/>)");
  ASSERT_TRUE(policy) << policy.error().message;
  EXPECT_EQ(policy->mode, FoldMode::Auto);
  EXPECT_EQ(policy->minVcpus, 2u);
  EXPECT_EQ(policy->weight, 200u);
  EXPECT_FALSE(policy->maxVcpus);
  auto fixed = parsePolicyXml(R"(<policy mode="fixed" vcpus="3"/>)");
  ASSERT_TRUE(fixed);
  EXPECT_EQ(fixed->fixedVcpus, 3u);
  auto prefixed = parsePolicyXml(R"(<fold:policy xmlns:fold="https://vcpufold.org/xmlns/policy/1" mode="off"/>)");
  ASSERT_TRUE(prefixed) << prefixed.error().message;
  EXPECT_EQ(prefixed->mode, FoldMode::Off);
  EXPECT_EQ(parsePolicyXml("<policy/>")->mode, FoldMode::Auto) << "mode defaults to auto";
}

TEST(Policy, RejectsWithTheReason) {
  const std::pair<const char*, const char*> cases[] = {
      {R"(<policy mode="sometimes"/>)", "mode=\"sometimes\""},
      {R"(<policy mode="fixed"/>)", "needs vcpus"},
      {R"(<policy mode="auto" vcpus="2"/>)", "only for mode \"fixed\""},
      {R"(<policy min-vcpus="0"/>)", "min-vcpus=\"0\" is out of range"},
      {R"(<policy min-vcpus="-1"/>)", "not a whole number"},
      {R"(<policy weight="2.5"/>)", "not a whole number"},
      {R"(<policy weight="20000"/>)", "weight=\"20000\" is out of range"},
      {R"(<policy min-vcpus="4" max-vcpus="2"/>)", "above max-vcpus"},
      {R"(<policy colour="blue"/>)", "unknown attribute colour"},
      {R"(<policy><x/></policy>)", "no child elements"},
      {R"(<limits mode="auto"/>)", "expected a <policy>"},
      {R"(<policy xmlns="http://example.com/other" mode="auto"/>)", "namespace"},
      {R"(<policy mode="auto")", "not well-formed"},
      {R"(<!DOCTYPE p [<!ENTITY e SYSTEM "file:///etc/passwd">]><policy mode="&e;"/>)", "external entity"},
  };
  for (const auto& [xml, expected] : cases) {
    auto policy = parsePolicyXml(xml);
    ASSERT_FALSE(policy) << xml;
    EXPECT_NE(policy.error().message.find(expected), std::string::npos) << xml << " -> " << policy.error().message;
  }
}

TEST(Policy, FormatRoundTrips) {
  for (const char* xml : {R"(<policy mode="auto"/>)", R"(<policy mode="fixed" vcpus="3"/>)",
                          R"(<policy mode="auto" min-vcpus="2" max-vcpus="6" weight="300"/>)"}) {
    auto policy = parsePolicyXml(xml);
    ASSERT_TRUE(policy) << xml;
    EXPECT_EQ(formatPolicyXml(*policy), xml);
  }
}
