#include "engine/config/rails.h"

#include <string>

#include "engine/config/loader.h"
#include "engine/config/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace provisioner::config {
namespace {

using namespace testing;  // NOLINT: test_util.h's vocabulary

std::string Doc(const std::string& rails) {
  return "apiVersion: provisioner/v1alpha1\n"
         "kind: HostConfig\n"
         "metadata:\n"
         "  name: w\n"
         "spec:\n"
         "  rails:\n" +
         rails;
}

const char* kRails =
    "    count: 3\n"                                        // line 7
    "    nic:\n"                                            // 8
    "      nicSelector: { vendor: \"15b3\" }\n"             // 9
    "      numVfs: 12\n"                                    // 10
    "      resourceName: \"gpu{n}sriov\"\n"                 // 11
    "    ipPool:\n"                                         // 12
    "      name: \"net{10+n}\"\n"                           // 13
    "      subnet: \"172.16.{10+n}.0/24\"\n"                // 14
    "      ips: [\"172.16.{10+n}.1-172.16.{10+n}.200\"]\n"  // 15
    "    multus:\n"                                         // 16
    "      cniType: sriov\n";                               // 17

TEST(RailTemplateTest, Forms) {
  std::string e;
  EXPECT_EQ(ExpandRailTemplate("gpu{n}-sriov", 3, &e), "gpu3-sriov");
  EXPECT_EQ(ExpandRailTemplate("172.16.{10+n}.{ n + 100 }", 3, &e), "172.16.13.103");
  EXPECT_EQ(ExpandRailTemplate("mlx5_{n-1}", 1, &e), "mlx5_0");
  EXPECT_EQ(ExpandRailTemplate("plain", 1, &e), "plain");
  EXPECT_FALSE(ExpandRailTemplate("gpu{m}", 1, &e));
  EXPECT_EQ(e,
            "unknown template {m} in \"gpu{m}\": use {n} (1-based rail number), {A+n}, {n+A}, "
            "{n-A} or {host}");
  EXPECT_FALSE(ExpandRailTemplate("gpu{n", 1, &e));
  EXPECT_FALSE(ExpandRailTemplate("gpu}", 1, &e));
  EXPECT_FALSE(ExpandRailTemplate("{2*n}", 1, &e));
}

// Issue 39: a rail's address from the host's number (spec.rails.hostIndex).
TEST(RailsTest, HostTemplate) {
  std::string e;
  EXPECT_EQ(ExpandRailTemplate("172.16.{n}.{host}/24", 3, &e, 7), "172.16.3.7/24");
  EXPECT_FALSE(ExpandRailTemplate("172.16.{n}.{host}/24", 3, &e));
  EXPECT_EQ(e, "{host} in \"172.16.{n}.{host}/24\" needs spec.rails.hostIndex (this host's number)");
}

TEST(RailsTest, ExpandsIntoNicsPoolsAndMultusConfigs) {
  LoadResult r = LoadDesiredStateFromString(Doc(kRails), "host.yaml");
  ASSERT_TRUE(r.state.has_value()) << (r.diagnostics.empty() ? "" : r.diagnostics[0].message);
  const DesiredState& s = *r.state;
  ASSERT_EQ(s.nics.size(), 3u);
  ASSERT_EQ(s.ip_pools.size(), 3u);
  ASSERT_EQ(s.multus_configs.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const std::string n = std::to_string(i + 1);
    EXPECT_EQ(s.nics[i].name, "rail" + n);
    EXPECT_EQ(s.nics[i].selector.near_gpu, i);
    EXPECT_EQ(s.nics[i].selector.vendor, "15b3");
    EXPECT_EQ(s.nics[i].resource_name, "gpu" + n + "sriov");
    EXPECT_EQ(s.ip_pools[i].name, "net1" + n);
    EXPECT_EQ(s.ip_pools[i].subnet, "172.16.1" + n + ".0/24");
    EXPECT_EQ(s.multus_configs[i].nic, "rail" + n);
    EXPECT_EQ(s.multus_configs[i].ippools.ipv4, std::vector<std::string>{"net1" + n});
  }
  EXPECT_FALSE(s.rails_need_gpu_count);
  // Marks of expanded items point at the rails fields.
  EXPECT_EQ(s.marks.Find("spec.nics[2].numVfs").line, 10);
  EXPECT_EQ(s.marks.Find("spec.nics[2].numVfs").column, 15);
  EXPECT_EQ(s.marks.Find("spec.ipPools[1].subnet").line, 14);
  EXPECT_EQ(s.marks.Find("spec.nics[1].nicSelector.nearGpu").line, 7);
  // The expanded document has no rails block left.
  auto j = nlohmann::json::parse(r.expanded_json);
  EXPECT_FALSE(j["spec"].contains("rails"));
  EXPECT_EQ(j["spec"]["nics"].size(), 3u);
}

TEST(RailsTest, WrittenItemsComeFirst) {
  std::string yaml = Doc(kRails) +
                     "  nics:\n"
                     "    - { name: mgmt, nicSelector: { pfNames: [eno1] } }\n";
  LoadResult r = LoadDesiredStateFromString(yaml, "host.yaml");
  ASSERT_TRUE(r.state.has_value());
  ASSERT_EQ(r.state->nics.size(), 4u);
  EXPECT_EQ(r.state->nics[0].name, "mgmt");
  EXPECT_EQ(r.state->nics[1].selector.near_gpu, 0);
}

TEST(RailsTest, ProblemsInExpandedItemsNameTheRailsField) {
  std::string yaml =
      Doc(std::string(kRails).replace(std::string(kRails).find("numVfs: 12"), 10, "numVfs: 3000"));
  EXPECT_THAT(Diagnose(yaml),
              ElementsAre("host.yaml:10:15: spec.rails.nic.numVfs: rail 1 (spec.nics[0].numVfs): "
                          "3000 exceeds the maximum 2048"));
}

TEST(RailsTest, CrossItemRulesSeeExpandedItems) {
  // Every rail gets the same pool name: duplicates.
  std::string yaml =
      Doc(std::string(kRails).replace(std::string(kRails).find("net{10+n}"), 9, "net"));
  auto d = Diagnose(yaml);
  ASSERT_FALSE(d.empty());
  EXPECT_THAT(d[0], ::testing::HasSubstr("host.yaml:13:13: spec.rails.ipPool.name: rail 2"));
  EXPECT_THAT(d[0], ::testing::HasSubstr("duplicate"));
}

TEST(RailsTest, BadTemplatesAndFieldsRailsSets) {
  ExpectDiagnoses({
      {Doc("    count: 2\n    nic: { resourceName: \"gpu{x}\" }\n"),
       ElementsAre("host.yaml:8:26: spec.rails.nic.resourceName: unknown template {x} in "
                   "\"gpu{x}\": use {n} (1-based rail number), {A+n}, {n+A}, {n-A} "
                   "or {host}")},
      {Doc("    count: 2\n    nic: { nicSelector: { nearGpu: 1 } }\n"),
       ElementsAre("host.yaml:8:36: spec.rails.nic.nicSelector.nearGpu: set by rails: "
                   "rail n uses the NIC nearest to GPU n-1; remove it")},
      {Doc("    count: 0\n    nic: {}\n"),
       ElementsAre("host.yaml:7:12: spec.rails.count: 0 is below the minimum 1")},
      {Doc("    count: all\n    nic: {}\n"),
       ElementsAre(::testing::HasSubstr("spec.rails.count: "))},
      {Doc("    count: 2\n"), ElementsAre(::testing::HasSubstr("spec.rails"))},
  });
}

TEST(RailsTest, HugeExpansionsAreRefused) {
  std::string list = "[";
  for (int i = 0; i < 2000; ++i) list += (i ? ",\"x\"" : "\"x\"");
  list += "]";
  EXPECT_THAT(Diagnose(Doc("    count: 64\n    nic: { nicSelector: { pfNames: " + list + " } }\n")),
              ElementsAre(::testing::HasSubstr("spec.rails: 64 rails of 2007 values each exceed "
                                               "100000 values")));
}

TEST(RailsTest, AllGpusWaitsForTheHost) {
  std::string yaml = Doc("    count: allGpus\n    nic: { nicSelector: { vendor: \"15b3\" } }\n");
  LoadResult r = LoadDesiredStateFromString(yaml, "host.yaml");
  ASSERT_TRUE(r.state.has_value());
  EXPECT_TRUE(r.state->rails_need_gpu_count);
  EXPECT_THAT(r.state->nics, IsEmpty());
  LoadResult host = LoadDesiredStateFromString(yaml, "host.yaml", LoadOptions{5});
  ASSERT_TRUE(host.state.has_value());
  EXPECT_FALSE(host.state->rails_need_gpu_count);
  ASSERT_EQ(host.state->nics.size(), 5u);
  EXPECT_EQ(host.state->nics[4].selector.near_gpu, 4);
  EXPECT_THAT(Diagnose(yaml, LoadOptions{0}),
              ElementsAre("host.yaml:7:12: spec.rails.count: allGpus: this host has 0 GPUs; rails "
                          "need 1 to 64"));
  // Without a host the templates are still checked (on one rail).
  EXPECT_THAT(Diagnose(Doc("    count: allGpus\n    nic: { numVfs: -1 }\n")),
              ElementsAre(HasSubstr("spec.rails.nic.numVfs: rail 1 (spec.nics[0].numVfs)")));
}

}  // namespace
}  // namespace provisioner::config
