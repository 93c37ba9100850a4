// SPDX-License-Identifier: GPL-2.0-or-later
// Fleet rules: the first matching [[rule]] gives a VM without its own policy
// its default; the domain facts they match on, from a Nova-style domain XML.

#include "vcpufold/hostd/fleet_rule.h"

#include <gtest/gtest.h>

#include "vcpufold/hostd/domain_xml.h"
#include "vcpufold/hostd/hostd_config.h"

using namespace vcpufold::hostd;

namespace {

VmRecord vm(const std::string& name, std::optional<std::string> flavor = std::nullopt,
            std::optional<std::string> partition = std::nullopt) {
  VmRecord record;
  record.name = name;
  record.novaFlavor = std::move(flavor);
  record.partition = std::move(partition);
  return record;
}

FleetRule rule(std::optional<std::string> name, std::optional<std::string> flavor, std::optional<std::string> partition,
               std::uint32_t weight) {
  FleetRule out{std::move(name), std::move(flavor), std::move(partition), FoldPolicy{}};
  out.policy.weight = weight;
  return out;
}

}  // namespace

TEST(FleetRules, TheFirstMatchingRuleGivesTheDefaultAndOwnPoliciesWin) {
  const std::vector<FleetRule> rules{
      rule("web-*", std::nullopt, std::nullopt, 200), rule(std::nullopt, "m1.*", std::nullopt, 300),
      rule(std::nullopt, std::nullopt, "/machine/batch", 50), rule("web-?", "m1.small", std::nullopt, 999)};
  std::vector<VmRecord> vms{vm("web-1", "m1.large"), vm("instance-2a", "m1.large"), vm("batch-7", {}, "/machine/batch"),
                            vm("db-1"), vm("web-own")};
  vms[4].policySource = PolicySource::Metadata;
  vms[4].policy.weight = 700;
  applyFleetRules(rules, vms);
  EXPECT_EQ(vms[0].policy.weight, 200u) << "rule 1 comes first even though rule 2 matches too";
  EXPECT_EQ(vms[0].policyRule, "rule 1 (name=web-*)");
  EXPECT_EQ(vms[1].policy.weight, 300u);
  EXPECT_EQ(vms[1].policyRule, "rule 2 (nova_flavor=m1.*)");
  EXPECT_EQ(vms[2].policy.weight, 50u);
  EXPECT_EQ(vms[3].policySource, PolicySource::Default) << "no rule matches db-1";
  EXPECT_FALSE(vms[3].policy.weight);
  EXPECT_EQ(vms[4].policy.weight, 700u) << "the VM's own metadata wins over every rule";
  EXPECT_EQ(vms[4].policySource, PolicySource::Metadata);
}

TEST(FleetRules, EveryMatcherOfARuleMustMatch) {
  const FleetRule both = rule("web-*", "m1.small", std::nullopt, 1);
  EXPECT_TRUE(ruleMatches(both, vm("web-3", "m1.small")));
  EXPECT_FALSE(ruleMatches(both, vm("web-3", "m1.large")));
  EXPECT_FALSE(ruleMatches(both, vm("web-3"))) << "a VM with no flavor does not match a flavor pattern";
  EXPECT_TRUE(ruleMatches(rule(std::nullopt, std::nullopt, "/machine/*", 1), vm("x", {}, "/machine/batch")));
  EXPECT_EQ(describeRule(both, 4), "rule 4 (name=web-*, nova_flavor=m1.small)");
}

TEST(DomainFacts, NovaFlavorInAnyNamespaceVersionAndThePartition) {
  const std::string nova =
      "<domain type='kvm'><name>instance-0000002a</name><resource><partition>/machine/tenant-a</partition>"
      "</resource><metadata><nova:instance xmlns:nova='http://openstack.org/xmlns/libvirt/nova/1.0'>"
      "<nova:name>web-1</nova:name><nova:flavor name='m1.large'><nova:vcpus>4</nova:vcpus></nova:flavor>"
      "</nova:instance></metadata></domain>";
  const DomainFacts facts = readDomainFacts(nova);
  EXPECT_EQ(facts.novaFlavor, "m1.large");
  EXPECT_EQ(facts.partition, "/machine/tenant-a");
  const DomainFacts other = readDomainFacts(
      "<domain><metadata><x:instance xmlns:x='https://example.org/not-nova'><x:flavor name='big'/></x:instance>"
      "</metadata></domain>");
  EXPECT_FALSE(other.novaFlavor) << "a flavor in another namespace is not Nova's";
  EXPECT_FALSE(other.partition);
  EXPECT_FALSE(readDomainFacts("<domain>").novaFlavor) << "broken XML: no facts, no crash";
}

TEST(FleetRulesConfig, ParsedInOrderAndRefusedWithTheKey) {
  auto config = parseHostdConfig(
      "[[rule]]\nname = \"web-*\"\nmin_vcpus = 2\nweight = 200\n"
      "[[rule]]\nnova_flavor = \"m1.*\"\nmode = \"off\"\n",
      "hostd.toml");
  ASSERT_TRUE(config) << config.error().message;
  ASSERT_EQ(config->rules.size(), 2u);
  EXPECT_EQ(config->rules[0].name, "web-*");
  EXPECT_EQ(config->rules[0].policy.minVcpus, 2u);
  EXPECT_EQ(config->rules[1].novaFlavor, "m1.*");
  EXPECT_EQ(config->rules[1].policy.mode, FoldMode::Off);
  const auto problems = [](const std::string& text) {
    auto parsed = parseHostdConfig(text, "hostd.toml");
    return parsed ? std::string("accepted") : parsed.error().message;
  };
  EXPECT_NE(problems("[[rule]]\nweight = 200\n").find("rule[0].needs name, nova_flavor or partition"),
            std::string::npos)
      << problems("[[rule]]\nweight = 200\n");
  EXPECT_NE(problems("[[rule]]\nname = \"a*\"\nweight = 0\n").find("rule[0].policy: weight"), std::string::npos)
      << problems("[[rule]]\nname = \"a*\"\nweight = 0\n");
  EXPECT_NE(problems("[[rule]]\nname = \"a*\"\nflavour = \"x\"\n").find("rule[0].flavour"), std::string::npos)
      << problems("[[rule]]\nname = \"a*\"\nflavour = \"x\"\n");
  EXPECT_NE(problems("[[rule]]\nname = \"\"\n").find("empty pattern"), std::string::npos);
  EXPECT_NE(problems("rule = 3\n").find("expected [[rule]] tables"), std::string::npos);
}
