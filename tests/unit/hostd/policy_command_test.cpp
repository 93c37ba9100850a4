// SPDX-License-Identifier: GPL-2.0-or-later
// The policy command's parts: KEY=VALUE checked by the parser hostd reads
// metadata with, the scopes a request may write, and the metadata read and
// written through libvirt's API (test driver: test:///default, one shared
// node per process).

#include "vcpufold/hostd/policy_command.h"

#include <gtest/gtest.h>
#include <libvirt/libvirt.h>

using namespace vcpufold::hostd;

TEST(PolicyAssignments, KeysAreTheMetadataAttributesCheckedAsHostdReadsThem) {
  auto policy = applyPolicyAssignments(FoldPolicy{}, {"min-vcpus=2", "weight=200"});
  ASSERT_TRUE(policy) << policy.error().message;
  EXPECT_EQ(policy->minVcpus, 2u);
  EXPECT_EQ(policy->weight, 200u);
  EXPECT_EQ(formatPolicyXml(*policy), "<policy mode=\"auto\" min-vcpus=\"2\" weight=\"200\"/>");
  // Applied to the current policy: other keys stay; KEY= unsets.
  auto changed = applyPolicyAssignments(*policy, {"weight="});
  ASSERT_TRUE(changed);
  EXPECT_EQ(changed->minVcpus, 2u);
  EXPECT_FALSE(changed->weight);
  auto fixed = applyPolicyAssignments(*policy, {"mode=fixed", "vcpus=3"});
  ASSERT_TRUE(fixed) << fixed.error().message;
  EXPECT_EQ(fixed->mode, FoldMode::Fixed);
  EXPECT_EQ(fixed->fixedVcpus, 3u);
  auto back = applyPolicyAssignments(*fixed, {"mode=auto"});
  ASSERT_TRUE(back) << "auto takes no size: fixed's vcpus goes with fixed: " << back.error().message;
  EXPECT_FALSE(back->fixedVcpus);
}

TEST(PolicyAssignments, BadInputIsAClearErrorNamingTheKey) {
  const auto message = [](const std::vector<std::string>& assignments) {
    auto result = applyPolicyAssignments(FoldPolicy{}, assignments);
    return result ? std::string("accepted") : result.error().message;
  };
  EXPECT_NE(message({"weight=0"}).find("weight"), std::string::npos) << message({"weight=0"});
  EXPECT_NE(message({"colour=red"}).find("unknown key \"colour\""), std::string::npos);
  EXPECT_NE(message({"min-vcpus"}).find("not KEY=VALUE"), std::string::npos);
  EXPECT_NE(message({"mode=fixed"}).find("vcpus"), std::string::npos) << message({"mode=fixed"});
  EXPECT_NE(message({"mode=sometimes"}).find("mode"), std::string::npos);
  EXPECT_NE(message({"min-vcpus=4", "max-vcpus=2"}), "accepted");
  EXPECT_NE(message({"weight=2\" mode=\"off"}), "accepted") << "a value cannot smuggle in an attribute";
  EXPECT_NE(message({}).find("at least one"), std::string::npos);
}

TEST(PolicyScopes, WhatARequestMayWrite) {
  const PolicyStore::DomainState runningPersistent{true, true}, runningTransient{true, false}, shutOff{false, true};
  const auto scopes = [](PolicyRequest request, const PolicyStore::DomainState& state) {
    auto result = policyScopesFor(request, state);
    return result ? *result : std::vector<PolicyScope>{};
  };
  PolicyRequest neither{"vm", PolicyRequest::Action::Set, {}, false, false};
  EXPECT_EQ(scopes(neither, runningPersistent), (std::vector<PolicyScope>{PolicyScope::Live, PolicyScope::Config}));
  EXPECT_EQ(scopes(neither, runningTransient), std::vector<PolicyScope>{PolicyScope::Live});
  EXPECT_EQ(scopes(neither, shutOff), std::vector<PolicyScope>{PolicyScope::Config});
  PolicyRequest live = neither, config = neither;
  live.live = true;
  config.config = true;
  EXPECT_EQ(scopes(live, runningPersistent), std::vector<PolicyScope>{PolicyScope::Live});
  EXPECT_EQ(scopes(config, runningPersistent), std::vector<PolicyScope>{PolicyScope::Config});
  auto transient = policyScopesFor(config, runningTransient);
  ASSERT_FALSE(transient);
  EXPECT_NE(transient.error().message.find("transient"), std::string::npos);
  EXPECT_NE(transient.error().message.find("use --live"), std::string::npos);
  auto notRunning = policyScopesFor(live, shutOff);
  ASSERT_FALSE(notRunning);
  EXPECT_NE(notRunning.error().message.find("not running"), std::string::npos);
}

TEST(PolicyStore, MetadataThroughLibvirtsApiLiveConfigAndTransient) {
  auto store = PolicyStore::open("test:///default");
  ASSERT_TRUE(store) << store.error().message;
  auto state = store->state("test");
  ASSERT_TRUE(state) << state.error().message;
  EXPECT_TRUE(state->running);
  EXPECT_TRUE(state->persistent);
  ASSERT_TRUE(store->write("test", "<policy mode=\"auto\" weight=\"250\"/>", PolicyScope::Live));
  auto live = store->read("test", PolicyScope::Live);
  ASSERT_TRUE(live && *live);
  EXPECT_NE((*live)->find("weight=\"250\""), std::string::npos) << **live;
  auto config = store->read("test", PolicyScope::Config);
  ASSERT_TRUE(config);
  EXPECT_FALSE(*config) << "the persistent definition was not written";
  ASSERT_TRUE(store->write("test", std::nullopt, PolicyScope::Live));
  live = store->read("test", PolicyScope::Live);
  ASSERT_TRUE(live);
  EXPECT_FALSE(*live) << "cleared";
  EXPECT_FALSE(store->state("no-such-vm"));

  // A transient domain (created, never defined) has no persistent definition.
  virConnectPtr other = virConnectOpen("test:///default");
  ASSERT_NE(other, nullptr);
  virDomainPtr created =
      virDomainCreateXML(other,
                         "<domain type='test'><name>transient-vm</name><memory>65536</memory><vcpu>2</vcpu>"
                         "<os><type>hvm</type></os></domain>",
                         0);
  ASSERT_NE(created, nullptr);
  auto transient = store->state("transient-vm");
  ASSERT_TRUE(transient) << transient.error().message;
  EXPECT_TRUE(transient->running);
  EXPECT_FALSE(transient->persistent);
  virDomainDestroy(created);
  virDomainFree(created);
  virConnectClose(other);
}
