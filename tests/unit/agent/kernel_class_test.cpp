// SPDX-License-Identifier: GPL-2.0-or-later
// The default fold rule by guest kernel class (kernel_class.h): the classes
// of real release strings, the rule, and that the evidence compiled into the
// agent is the one docs/performance.md shows.

#include "vcpufold/agent/kernel_class.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace vcpufold::agent;
using vcpufold::protocol::Actuator;

TEST(KernelClass, ReleasesOfDebianKernelsFallIntoTheirClass) {
  // uname -r of the kernels the bench ran and of others operators run.
  EXPECT_EQ(classifyKernel("6.1.0-57-cloud-amd64", Actuator::Cpuset), KernelClass::StockBefore66);
  EXPECT_EQ(classifyKernel("6.12.118+deb12-cloud-amd64", Actuator::Cpuset), KernelClass::Stock66AndLater);
  EXPECT_EQ(classifyKernel("5.10.0-30-amd64", Actuator::Cpuset), KernelClass::StockBefore66);
  EXPECT_EQ(classifyKernel("6.5.13", Actuator::Cpuset), KernelClass::StockBefore66);
  EXPECT_EQ(classifyKernel("6.6.0", Actuator::Cpuset), KernelClass::Stock66AndLater);
  EXPECT_EQ(classifyKernel("7.0.2-1-amd64", Actuator::Cpuset), KernelClass::Stock66AndLater);
  EXPECT_EQ(classifyKernel("4.19.0-27-amd64", Actuator::None), KernelClass::StockBefore66);
}

TEST(KernelClass, TheKernelActuatorIsThePreferredCpusClassWhateverTheRelease) {
  EXPECT_EQ(classifyKernel("6.12.0-vcpufold", Actuator::Kernel), KernelClass::PreferredCpus);
  EXPECT_EQ(classifyKernel(std::nullopt, Actuator::Kernel), KernelClass::PreferredCpus);
  // The same patched kernel driven through cpusets counts by its version.
  EXPECT_EQ(classifyKernel("6.12.0-vcpufold", Actuator::Cpuset), KernelClass::Stock66AndLater);
}

TEST(KernelClass, AReleaseThatIsNotAVersionIsUnknown) {
  EXPECT_EQ(classifyKernel(std::nullopt, Actuator::Cpuset), KernelClass::Unknown);
  EXPECT_EQ(classifyKernel("", Actuator::Cpuset), KernelClass::Unknown);
  EXPECT_EQ(classifyKernel("linux", Actuator::Cpuset), KernelClass::Unknown);
  EXPECT_EQ(classifyKernel("6", Actuator::Cpuset), KernelClass::Unknown);
  EXPECT_EQ(classifyKernel("6.", Actuator::Cpuset), KernelClass::Unknown);
  EXPECT_EQ(classifyKernel(".12", Actuator::Cpuset), KernelClass::Unknown);
  EXPECT_EQ(classifyKernel("-6.12", Actuator::Cpuset), KernelClass::Unknown);
}

TEST(KernelClass, ByEvidenceDeclinesExactlyTheClassesTheTableDoesNotFold) {
  for (const KernelClass kernelClass : {KernelClass::PreferredCpus, KernelClass::StockBefore66,
                                        KernelClass::Stock66AndLater, KernelClass::Unknown}) {
    const auto declined = autoFoldDeclined(kernelClass, FoldDefault::ByEvidence);
    EXPECT_EQ(declined.has_value(), !evidenceFor(kernelClass).foldsByDefault) << kernelClassName(kernelClass);
    if (declined) {
      // The log line names the class, the figures and how to fold anyway.
      EXPECT_NE(declined->find(kernelClassName(kernelClass)), std::string::npos) << *declined;
      EXPECT_NE(declined->find(evidenceFor(kernelClass).figures), std::string::npos) << *declined;
      EXPECT_NE(declined->find("fold = \"always\""), std::string::npos) << *declined;
    }
    EXPECT_FALSE(autoFoldDeclined(kernelClass, FoldDefault::Always)) << kernelClassName(kernelClass);
  }
  // Where the release cannot be read there is no evidence: not folded.
  EXPECT_TRUE(autoFoldDeclined(KernelClass::Unknown, FoldDefault::ByEvidence));
}

TEST(KernelClass, TheCompiledEvidenceIsWhatThePerformancePageShows) {
  // docs/performance.md's "At a glance" table names each class in a cell,
  // `CLASS`: folded by default | `CLASS`: not folded by default.
  std::ifstream page(std::string(VCPUFOLD_SOURCE_DIR) + "/docs/performance.md");
  ASSERT_TRUE(page) << "docs/performance.md";
  std::stringstream text;
  text << page.rdbuf();
  const std::string glance = text.str().substr(0, text.str().find("\n## ", text.str().find("## At a glance") + 1));
  for (const KernelClass kernelClass :
       {KernelClass::PreferredCpus, KernelClass::StockBefore66, KernelClass::Stock66AndLater}) {
    const std::string cell = std::string("`") + kernelClassName(kernelClass) + "`: ";
    const auto at = glance.find(cell);
    ASSERT_NE(at, std::string::npos) << "no row for " << cell << " in At a glance";
    const bool pageFolds = glance.compare(at + cell.size(), 19, "folded by default |") == 0;
    const bool pageDeclines = glance.compare(at + cell.size(), 23, "not folded by default |") == 0;
    ASSERT_TRUE(pageFolds || pageDeclines) << glance.substr(at, 80);
    EXPECT_EQ(pageFolds, evidenceFor(kernelClass).foldsByDefault) << kernelClassName(kernelClass);
  }
}
