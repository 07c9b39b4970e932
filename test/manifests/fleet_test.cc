// Fleet manifests: the guides' scenarios rendered for two nodes of a pool
// and for two nodes without a pool label merge into one set the cluster can
// hold (policies in the operator's namespace, no name used twice with two
// meanings); hosts that disagree on one object are an error naming both.
#include "engine/manifests/fleet.h"

#include <map>
#include <string>
#include <vector>

#include "engine/config/loader.h"
#include "engine/manifests/manifests.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/manifests/golden.h"

namespace provisioner::manifests {
namespace {

using nlohmann::json;

// The seeds' four scenarios (the Spiderpool RDMA guides).
const char* const kScenarios[] = {"roce-shared-macvlan", "roce-sriov", "ib-sriov", "ipoib"};

DesiredState Load(const std::string& example) {
  LoadResult r = LoadDesiredStateFromFile("examples/" + example + ".yaml");
  EXPECT_TRUE(r.state.has_value()) << example;
  return r.state ? *r.state : DesiredState();
}

HostRender Render(DesiredState d, const std::string& node) {
  d.name = node;
  auto out = BuildHostManifests(d, ManifestOptions());
  EXPECT_TRUE(out.ok()) << node << ": " << out.status().message();
  return HostRender{node + " (" + node + ".yaml)", out.ok() ? *out : HostManifests()};
}

std::map<std::string, int> Count(const std::vector<Manifest>& ms) {
  std::map<std::string, int> n;
  for (const auto& m : ms) ++n[m.kind + "/" + m.Namespace() + "/" + m.name];
  return n;
}

TEST(FleetTest, PoolOfTwoNodesMergesIntoTheSingleNodeSet) {
  for (const char* scenario : kScenarios) {
    DesiredState d = Load(scenario);
    ASSERT_FALSE(d.kubernetes->node_selector.empty()) << scenario;  // the examples are pools
    HostManifests one = Render(d, "worker1").out;
    auto merged = MergeHosts({Render(d, "worker1"), Render(d, "worker2")});
    ASSERT_TRUE(merged.ok()) << scenario << ": " << merged.status().message();
    // Identical objects once: the pool's set is one node's set.
    ASSERT_EQ(merged->manifests.size(), one.manifests.size()) << scenario;
    for (size_t i = 0; i < one.manifests.size(); ++i) {
      EXPECT_EQ(merged->manifests[i].doc, one.manifests[i].doc) << scenario;
    }
    EXPECT_EQ(merged->helm_values, one.helm_values) << scenario;
    for (const auto& [key, n] : Count(merged->manifests)) EXPECT_EQ(n, 1) << scenario << " " << key;
    for (const auto& m : merged->manifests) {
      if (m.kind == "SriovNetworkNodePolicy") {
        EXPECT_EQ(m.Namespace(), "kube-system") << scenario;
        EXPECT_EQ(m.doc["spec"]["nodeSelector"], json(d.kubernetes->node_selector)) << scenario;
      }
    }
  }
}

TEST(FleetTest, TwoNodesWithoutAPoolGetOnePolicyEach) {
  for (const char* scenario : kScenarios) {
    DesiredState d = Load(scenario);
    d.kubernetes->node_selector.clear();
    auto merged = MergeHosts({Render(d, "worker1"), Render(d, "worker2")});
    ASSERT_TRUE(merged.ok()) << scenario << ": " << merged.status().message();
    for (const auto& [key, n] : Count(merged->manifests)) EXPECT_EQ(n, 1) << scenario << " " << key;
    int policies = 0;
    for (const auto& nic : d.nics) {
      if (nic.num_vfs.value_or(0) <= 0) continue;
      for (const char* node : {"worker1", "worker2"}) {
        const std::string name = nic.name + "-" + node;
        bool found = false;
        for (const auto& m : merged->manifests) {
          if (m.kind != "SriovNetworkNodePolicy" || m.name != name) continue;
          found = true;
          EXPECT_EQ(m.Namespace(), "kube-system");
          EXPECT_EQ(m.doc["spec"]["nodeSelector"], json({{"kubernetes.io/hostname", node}}));
        }
        EXPECT_TRUE(found) << scenario << ": " << name;
        ++policies;
      }
    }
    if (std::string(scenario) == "roce-sriov" || std::string(scenario) == "ib-sriov") {
      EXPECT_EQ(policies, 2) << scenario;
    }
    // Per-node ConfigMaps (nccl-env-<node>) for each node; shared objects
    // (pools, multus configs) once.
    int nccl = 0;
    for (const auto& m : merged->manifests) nccl += m.name.rfind("nccl-env-worker", 0) == 0;
    EXPECT_EQ(nccl, 2) << scenario;
  }
}

TEST(FleetTest, ConflictingHostsAreAnErrorNamingBothAndTheField) {
  DesiredState d = Load("roce-sriov");
  DesiredState other = d;
  other.nics[0].num_vfs = 8;
  auto merged = MergeHosts({Render(d, "worker1"), Render(other, "worker2")});
  ASSERT_FALSE(merged.ok());
  const std::string& msg = merged.status().message();
  EXPECT_NE(msg.find("SriovNetworkNodePolicy kube-system/roce-sriov-nic differs between hosts "
                     "worker1 (worker1.yaml) and worker2 (worker2.yaml) at spec.numVfs: 12 vs 8"),
            std::string::npos)
      << msg;

  // A cluster-scoped object: a pool's range that another host.yaml changed.
  other = d;
  other.ip_pools[0].gateway = "172.81.0.254";
  merged = MergeHosts({Render(d, "worker1"), Render(other, "worker2")});
  ASSERT_FALSE(merged.ok());
  EXPECT_NE(merged.status().message().find("SpiderIPPool v4-81 differs"), std::string::npos)
      << merged.status().message();
  EXPECT_NE(merged.status().message().find("spec.gateway: \"172.81.0.1\" vs \"172.81.0.254\""),
            std::string::npos)
      << merged.status().message();

  // The chart values: one release for the cluster.
  DesiredState shared = Load("roce-shared-macvlan");
  DesiredState shared2 = shared;
  shared2.kubernetes->rdma_shared_device_plugin->rdma_hca_max = 100;
  merged = MergeHosts({Render(shared, "worker1"), Render(shared2, "worker2")});
  ASSERT_FALSE(merged.ok());
  EXPECT_NE(merged.status().message().find(
                "rdma.rdmaSharedDevicePlugin.deviceConfig.rdmaHcaMax: 500 vs 100"),
            std::string::npos)
      << merged.status().message();

  // The release namespace (the helm -n): one release, one namespace. Two
  // node-qualified hosts so that the policies themselves do not collide.
  DesiredState a = Load("roce-shared-macvlan");
  DesiredState b = a;
  b.kubernetes->sriov_operator_namespace = "spiderpool";
  merged = MergeHosts({Render(a, "worker1"), Render(b, "worker2")});
  ASSERT_FALSE(merged.ok());
  EXPECT_NE(merged.status().message().find("spec.kubernetes.sriovOperatorNamespace differs between "
                                           "hosts worker1 (worker1.yaml) (kube-system) and worker2 "
                                           "(worker2.yaml) (spiderpool)"),
            std::string::npos)
      << merged.status().message();
  merged = MergeHosts({Render(a, "worker1"), Render(a, "worker2")});
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(merged->release_namespace, "kube-system");
}

// Golden: two nodes without a pool label (node-qualified policies and
// nccl-env, shared pools and configs once), as the CLI prints it.
// UPDATE_GOLDEN=1 bazel run //test/manifests:fleet_test rewrites it.
TEST(FleetTest, GoldenTwoNodesWithoutAPool) {
  DesiredState d = Load("roce-sriov");
  d.kubernetes->node_selector.clear();
  auto merged = MergeHosts({Render(d, "worker1"), Render(d, "worker2")});
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  provisioner::testing::ExpectGolden("test/manifests/golden/fleet-roce-sriov-no-pool.yaml",
                                     RenderManifests(merged->manifests));
}

// A JSON document inside a string (a ConfigMap's config.json) is compared
// as JSON: the difference names the field inside it.
TEST(FleetTest, FirstDifferenceLooksInsideEmbeddedJson) {
  json a = {{"data", {{"config.json", R"({"resourceList":[{"selectors":{"rootDevices":["0000:af:00.0"]}}]})"}}}};
  json b = {{"data", {{"config.json", R"({"resourceList":[{"selectors":{"rootDevices":["0000:3b:00.0"]}}]})"}}}};
  EXPECT_EQ(FirstDifference(a, b),
            "data.\"config.json\".resourceList[0].selectors.rootDevices[0]: \"0000:af:00.0\" vs "
            "\"0000:3b:00.0\"");
  EXPECT_EQ(FirstDifference(a, a), "");
  EXPECT_EQ(FirstDifference(json({{"x", 1}}), json::object()), "x: 1 vs absent");
}

// A pool of 1,000 nodes is one set (and fast: bench //bench:fleet_manifests).
TEST(FleetTest, ThousandNodePoolMergesToOneSet) {
  DesiredState d = Load("roce-sriov");
  std::vector<HostRender> hosts;
  for (int i = 0; i < 1000; ++i) hosts.push_back(Render(d, "node" + std::to_string(i)));
  const size_t one = hosts[0].out.manifests.size();
  auto merged = MergeHosts(std::move(hosts));
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  EXPECT_EQ(merged->manifests.size(), one);
}

}  // namespace
}  // namespace provisioner::manifests
