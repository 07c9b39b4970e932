// provisioner manifests: every document for every example validates against
// its CRD (strict: unknown fields are errors), plus specific values and a
// golden stdout.
#include "modules/k8s/manifests.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/config/loader.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/manifests/crd_checker.h"

namespace provisioner::k8s {
namespace {

using nlohmann::json;
using provisioner::testing::CrdChecker;

const char* const kExamples[] = {"roce-shared-macvlan", "roce-sriov", "ib-sriov", "ipoib",
                                 "rails-8gpu"};

DesiredState Load(const std::string& example) {
  LoadResult r = LoadDesiredStateFromFile("examples/" + example + ".yaml");
  EXPECT_TRUE(r.state.has_value()) << example;
  return r.state ? *r.state : DesiredState();
}

std::vector<Manifest> Build(const DesiredState& d, const std::string& flavor = "spiderpool") {
  ManifestOptions opt;
  opt.flavor = flavor;
  auto m = BuildManifests(d, opt);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? *m : std::vector<Manifest>();
}

const CrdChecker& Checker() {
  static CrdChecker* checker = [] {
    auto* c = new CrdChecker();
    for (const char* f : {"spiderpool.spidernet.io_spiderippools.yaml",
                          "spiderpool.spidernet.io_spidermultusconfigs.yaml",
                          "sriovnetwork.openshift.io_sriovnetworknodepolicies.yaml",
                          "k8s.cni.cncf.io_networkattachmentdefinitions.network-attachment-"
                          "definition-client.yaml"}) {
      std::string error;
      EXPECT_TRUE(c->AddCrdFile(std::string("test/manifests/crds/") + f, &error)) << error;
    }
    return c;
  }();
  return *checker;
}

const Manifest* Find(const std::vector<Manifest>& ms, const std::string& kind,
                     const std::string& name) {
  for (const auto& m : ms) {
    if (m.kind == kind && m.name == name) return &m;
  }
  return nullptr;
}

void ExpectValid(const std::string& label, const std::vector<Manifest>& ms) {
  ASSERT_FALSE(ms.empty()) << label;
  for (const auto& m : ms) {
    if (m.kind == "ConfigMap") {  // core type, no CRD: check config.json's shape
      json c = json::parse(m.doc["data"]["config.json"].get<std::string>());
      ASSERT_TRUE(c["configList"].is_array()) << label;
      for (const auto& e : c["configList"]) {
        EXPECT_TRUE(e["resourceName"].is_string());
        EXPECT_TRUE(e["resourcePrefix"].is_string());
        EXPECT_TRUE(e["rdmaHcaMax"].is_number_integer());
        EXPECT_TRUE(e["selectors"].is_object());
      }
      continue;
    }
    std::vector<std::string> errors = Checker().Check(m.doc);
    std::string all;
    for (const auto& e : errors) all += "\n  " + e;
    EXPECT_TRUE(errors.empty()) << label << " " << m.kind << "/" << m.name << ":" << all;
  }
}

TEST(ManifestsTest, EveryExampleValidatesAgainstTheCrds) {
  for (const char* e : kExamples) {
    DesiredState d = Load(e);
    ExpectValid(std::string(e) + " spiderpool", Build(d, "spiderpool"));
    ExpectValid(std::string(e) + " multus", Build(d, "multus"));
  }
}

TEST(ManifestsTest, CheckerRejectsUnknownFieldsTypesEnumsAndRequired) {
  Manifest m = *Find(Build(Load("roce-sriov")), "SpiderMultusConfig", "roce-sriov");
  json doc = m.doc;
  doc["spec"]["sriov"]["enableRdma"] = true;  // removed upstream: rdmaIsolation
  doc["spec"]["cniType"] = "bogus";
  doc["spec"]["sriov"]["vlanID"] = "7";
  std::vector<std::string> errors = Checker().Check(doc);
  std::string all;
  for (const auto& e : errors) all += e + "\n";
  EXPECT_NE(all.find("spec.sriov.enableRdma: unknown field"), std::string::npos) << all;
  EXPECT_NE(all.find("spec.cniType"), std::string::npos) << all;
  EXPECT_NE(all.find("spec.sriov.vlanID: want integer"), std::string::npos) << all;

  Manifest p = *Find(Build(Load("roce-sriov")), "SriovNetworkNodePolicy", "roce-sriov-nic");
  p.doc["spec"].erase("numVfs");
  errors = Checker().Check(p.doc);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "spec.numVfs: required");
}

TEST(ManifestsTest, SriovExclusiveGetsRdmaIsolationAndPrefixedResource) {
  auto ms = Build(Load("roce-sriov"));
  const Manifest* m = Find(ms, "SpiderMultusConfig", "roce-sriov");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->doc["spec"]["sriov"]["rdmaIsolation"], true);
  EXPECT_EQ(m->doc["spec"]["sriov"]["resourceName"], "spidernet.io/mellanoxrdma");
  EXPECT_FALSE(m->doc["spec"]["sriov"].contains("enableRdma"));
  EXPECT_EQ(m->doc["metadata"]["annotations"]["cni.spidernet.io/rdma-resource-inject"],
            "rdma-network");
  EXPECT_EQ(m->doc["metadata"]["namespace"], "kube-system");
}

TEST(ManifestsTest, SharedModeHasNoRdmaIsolation) {
  DesiredState d = Load("roce-sriov");
  d.rdma->netns_mode = "shared";
  const Manifest* m = nullptr;
  auto ms = Build(d);
  m = Find(ms, "SpiderMultusConfig", "roce-sriov");
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(m->doc["spec"]["sriov"].contains("rdmaIsolation"));
}

TEST(ManifestsTest, NodePolicyNodeSelectorMerged) {
  auto ms = Build(Load("roce-sriov"));
  const Manifest* p = Find(ms, "SriovNetworkNodePolicy", "roce-sriov-nic");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->doc["spec"]["nodeSelector"],
            json({{"kubernetes.io/hostname", "worker1"}, {"kubernetes.io/os", "linux"}}));
  EXPECT_EQ(p->doc["spec"]["externallyManaged"], true);
  EXPECT_EQ(p->doc["spec"]["numVfs"], 12);
  EXPECT_EQ(p->doc["spec"]["linkType"], "eth");
  EXPECT_EQ(p->doc["spec"]["resourceName"], "mellanoxrdma");
  EXPECT_EQ(p->doc["spec"]["nicSelector"]["rootDevices"], json({"0000:af:00.0"}));
  EXPECT_EQ(p->doc["metadata"]["namespace"], "sriov-network-operator");
}

TEST(ManifestsTest, MacvlanMasterAndSharedRdmaResource) {
  auto ms = Build(Load("roce-shared-macvlan"));
  const Manifest* m = Find(ms, "SpiderMultusConfig", "macvlan-ens6f1np1");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->doc["spec"]["macvlan"]["master"], json({"ens6f1np1"}));
  EXPECT_EQ(m->doc["spec"]["macvlan"]["rdmaResourceName"], "spidernet.io/hca_shared_devices");
  const Manifest* cm = Find(ms, "ConfigMap", "rdma-devices");
  ASSERT_NE(cm, nullptr);
  EXPECT_EQ(cm->doc["metadata"]["namespace"], "kube-system");
  json c = json::parse(cm->doc["data"]["config.json"].get<std::string>());
  EXPECT_EQ(c["configList"][0]["selectors"]["ifNames"], json({"ens6f0np0", "ens6f1np1"}));
  EXPECT_EQ(c["configList"][0]["selectors"]["vendors"], json({"15b3"}));
  EXPECT_EQ(c["configList"][0]["rdmaHcaMax"], 500);
  EXPECT_EQ(Find(ms, "SriovNetworkNodePolicy", "roce-nic0"), nullptr);  // no numVfs
}

TEST(ManifestsTest, IbSriovAndIpoib) {
  auto ib = Build(Load("ib-sriov"));
  const Manifest* m = Find(ib, "SpiderMultusConfig", "ib-sriov");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->doc["spec"]["ibsriov"]["pkey"], "0x1000");
  EXPECT_EQ(m->doc["spec"]["ibsriov"]["resourceName"], "spidernet.io/mellanoxibsriov");
  EXPECT_EQ(Find(ib, "SriovNetworkNodePolicy", "ib-nic")->doc["spec"]["linkType"], "ib");
  auto ipoib = Build(Load("ipoib"));
  m = Find(ipoib, "SpiderMultusConfig", "ipoib-ibs5f0");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->doc["spec"]["ipoib"]["master"], "ibs5f0");
}

TEST(ManifestsTest, MissingPfNameIsAnErrorNamingTheField) {
  DesiredState d = Load("roce-shared-macvlan");
  d.nics[1].selector.pf_names.clear();
  ManifestOptions opt;
  auto m = BuildManifests(d, opt);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("spec.nics[1].nicSelector.pfNames"), std::string::npos)
      << m.status().message();
}

TEST(ManifestsTest, MultusFlavorNetworkAttachmentDefinitions) {
  auto ms = Build(Load("roce-sriov"), "multus");
  EXPECT_EQ(Find(ms, "SpiderIPPool", "v4-81"), nullptr);
  const Manifest* n = Find(ms, "NetworkAttachmentDefinition", "roce-sriov");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->doc["metadata"]["annotations"]["k8s.v1.cni.cncf.io/resourceName"],
            "spidernet.io/mellanoxrdma");
  json c = json::parse(n->doc["spec"]["config"].get<std::string>());
  EXPECT_EQ(c["plugins"][0]["type"], "sriov");
  EXPECT_EQ(c["plugins"][0]["ipam"]["type"], "whereabouts");
  EXPECT_EQ(c["plugins"][0]["ipam"]["range_start"], "172.81.0.100");
  EXPECT_EQ(c["plugins"][1]["type"], "rdma");

  auto mac = Build(Load("roce-shared-macvlan"), "multus");
  n = Find(mac, "NetworkAttachmentDefinition", "macvlan-ens6f0np0");
  ASSERT_NE(n, nullptr);
  c = json::parse(n->doc["spec"]["config"].get<std::string>());
  EXPECT_EQ(c["type"], "macvlan");
  EXPECT_EQ(c["master"], "ens6f0np0");
  EXPECT_EQ(c["ipam"]["range"], "172.81.0.0/16");
  EXPECT_EQ(c["ipam"]["range_end"], "172.81.0.120");
}

TEST(ManifestsTest, GoldenStdoutRoceSriov) {
  std::ifstream in("test/manifests/golden/roce-sriov.yaml");
  ASSERT_TRUE(in);
  std::stringstream want;
  want << in.rdbuf();
  std::ostringstream got;
  ManifestOptions opt;
  ASSERT_TRUE(WriteManifests(Load("roce-sriov"), opt, "", got).ok());
  EXPECT_EQ(got.str(), want.str());
}

TEST(ManifestsTest, FileNames) {
  Manifest m{"SriovNetworkNodePolicy", "gpu1-nic", json::object()};
  EXPECT_EQ(ManifestFileName(m), "sriovnetworknodepolicy-gpu1-nic.yaml");
}

}  // namespace
}  // namespace provisioner::k8s
