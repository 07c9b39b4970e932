// provisioner manifests: every document for every example validates against
// its CRD (strict: unknown fields are errors), plus specific values and a
// golden stdout.
#include "engine/manifests/manifests.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/config/loader.h"
#include "engine/output/render.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/manifests/crd_checker.h"
#include "test/manifests/golden.h"

namespace provisioner::manifests {
namespace {

using nlohmann::json;
using provisioner::testing::CrdChecker;
using provisioner::testing::ExpectGolden;
using ::testing::HasSubstr;

// The warnings of a build, one a line.
std::string Warnings(const HostManifests& hm) {
  std::string all;
  for (const auto& w : hm.warnings) all += w + "\n";
  return all;
}

// The warnings of building `d` with the default options (which must build).
std::string WarningsOf(const DesiredState& d) {
  auto hm = BuildHostManifests(d, ManifestOptions());
  EXPECT_TRUE(hm.ok()) << hm.status().message();
  return hm.ok() ? Warnings(*hm) : "";
}

const char* const kExamples[] = {
    "roce-shared-macvlan", "roce-sriov", "roce-sriov-jumbo", "ib-sriov", "ipoib", "rails-8gpu"};

DesiredState Load(const std::string& example) {
  LoadResult r = LoadDesiredStateFromFile("examples/" + example + ".yaml");
  EXPECT_TRUE(r.state.has_value()) << example;
  return r.state ? *r.state : DesiredState();
}

// The Spiderpool release lines with a golden per guide: the default (v1.x,
// CRDs in test/manifests/crds/) and v0.9 (crds/v0.9/, the guides' release).
const char* const kV09 = "v0.9.10";

void CollectLeaves(const json& j, const std::string& path, std::map<std::string, json>* out);

DesiredState AtRelease(DesiredState d, const std::string& version) {
  if (version.empty()) return d;
  if (!d.kubernetes) d.kubernetes = KubernetesSpec();
  d.kubernetes->spiderpool_version = version;
  return d;
}

std::vector<Manifest> Build(const DesiredState& d, const std::string& flavor = "spiderpool") {
  ManifestOptions opt;
  opt.flavor = flavor;
  auto m = BuildManifests(d, opt);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? *m : std::vector<Manifest>();
}

// The v1.x line: Spiderpool's CRDs and the sriov-network-operator's (the
// standalone operator's, externallyManaged and all).
CrdChecker* NewChecker() {
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
}

// The v0.9 line: every CRD the Spiderpool v0.9.10 chart installs
// (crds/v0.9/, its own and its bundled sriov-network-operator v1.2.0's),
// and the NAD (not Spiderpool's).
CrdChecker* NewV09Checker() {
  auto* c = new CrdChecker();
  int loaded = 0;
  for (const auto& e : std::filesystem::directory_iterator("test/manifests/crds/v0.9")) {
    if (e.path().extension() != ".yaml") continue;
    std::string error;
    EXPECT_TRUE(c->AddCrdFile(e.path().string(), &error)) << error;
    ++loaded;
  }
  EXPECT_EQ(loaded, 6);
  std::string error;
  EXPECT_TRUE(
      c->AddCrdFile("test/manifests/crds/k8s.cni.cncf.io_networkattachmentdefinitions."
                    "network-attachment-definition-client.yaml",
                    &error))
      << error;
  return c;
}

// The strict check of the release a manifest targets ("" the default line).
const CrdChecker& Checker(const std::string& version = "") {
  static CrdChecker* v1 = NewChecker();
  static CrdChecker* v09 = NewV09Checker();
  return version.empty() ? *v1 : *v09;
}

const Manifest* Find(const std::vector<Manifest>& ms, const std::string& kind,
                     const std::string& name) {
  for (const auto& m : ms) {
    if (m.kind == kind && m.name == name) return &m;
  }
  return nullptr;
}

void ExpectValid(const std::string& label, const std::vector<Manifest>& ms,
                 const std::string& version = "") {
  ASSERT_FALSE(ms.empty()) << label;
  for (const auto& m : ms) {
    if (m.kind == "ConfigMap" && m.name == "rdma-devices") {
      // Core type, no CRD: check the RDMA shared device plugin's config.json.
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
    if (m.kind == "ConfigMap" && m.name == "sriovdp-config") {
      // The SR-IOV network device plugin's resourceList: only the selector
      // keys it knows (pkg/types NetDeviceSelectors), with their types.
      json c = json::parse(m.doc["data"]["config.json"].get<std::string>());
      ASSERT_TRUE(c["resourceList"].is_array()) << label;
      ASSERT_FALSE(c["resourceList"].empty()) << label;
      for (const auto& e : c["resourceList"]) {
        EXPECT_TRUE(e["resourceName"].is_string());
        EXPECT_TRUE(e["resourcePrefix"].is_string());
        for (const auto& [k, v] : e["selectors"].items()) {
          if (k == "isRdma") {
            EXPECT_TRUE(v.is_boolean()) << label;
          } else {
            EXPECT_TRUE(k == "vendors" || k == "devices" || k == "drivers" || k == "pfNames" ||
                        k == "rootDevices" || k == "linkTypes")
                << label << ": selector " << k;
            EXPECT_TRUE(v.is_array()) << label << ": " << k;
          }
        }
      }
      continue;
    }
    if (m.kind == "ConfigMap" && m.name.rfind("nccl-env-", 0) == 0) {
      // envFrom: every key a valid env name, every value a string.
      for (const auto& [k, v] : m.doc["data"].items()) {
        EXPECT_EQ(k.rfind("NCCL_", 0), 0u) << label << ": " << k;
        EXPECT_TRUE(v.is_string()) << label << ": " << k;
      }
      EXPECT_TRUE(m.doc["data"]["NCCL_SOCKET_IFNAME"].is_string()) << label;
      continue;
    }
    if (m.kind == "DaemonSet") {
      EXPECT_EQ(m.doc["apiVersion"], "apps/v1");
      EXPECT_EQ(m.doc["spec"]["selector"]["matchLabels"],
                m.doc["spec"]["template"]["metadata"]["labels"]);
      continue;
    }
    if (m.kind == "Service") {
      EXPECT_EQ(m.doc["apiVersion"], "v1");
      EXPECT_EQ(m.doc["spec"]["clusterIP"], "None") << label;
      continue;
    }
    std::vector<std::string> errors = Checker(version).Check(m.doc);
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
    ManifestOptions opt;
    opt.with_test_workload = true;
    auto w = BuildManifests(d, opt);
    ASSERT_TRUE(w.ok()) << e << ": " << w.status().message();
    ExpectValid(std::string(e) + " with workload", *w);
    // The same guide on Spiderpool v0.9, against v0.9.10's CRDs.
    auto v09 = BuildManifests(AtRelease(d, kV09), opt);
    ASSERT_TRUE(v09.ok()) << e << ": " << v09.status().message();
    ExpectValid(std::string(e) + " v0.9", *v09, kV09);
  }
}

// Spiderpool v0.9 (the guides' release) spells the sriov switch enableRdma;
// v1.0 renamed it rdmaIsolation. Each release's CRD prunes the other's
// spelling, and a pruned enableRdma defaults to false: exclusive-mode pods
// without their RDMA device.
TEST(ManifestsTest, EachSpiderpoolReleaseGetsItsOwnSpelling) {
  for (const char* example : {"roce-sriov", "rails-8gpu"}) {
    DesiredState d = Load(example);
    const Manifest* v1 = nullptr;
    auto ms1 = Build(d);
    for (const auto& m : ms1) {
      if (m.kind == "SpiderMultusConfig") v1 = &m;
    }
    ASSERT_NE(v1, nullptr) << example;
    EXPECT_EQ(v1->doc["spec"]["sriov"]["rdmaIsolation"], true) << example;
    EXPECT_FALSE(v1->doc["spec"]["sriov"].contains("enableRdma")) << example;
    // The v1 object against v0.9's CRD: rdmaIsolation is unknown there.
    std::vector<std::string> errors = Checker(kV09).Check(v1->doc);
    ASSERT_EQ(errors.size(), 1u) << example;
    EXPECT_EQ(errors[0], "spec.sriov.rdmaIsolation: unknown field") << example;

    auto ms09 = Build(AtRelease(d, kV09));
    for (const auto& m : ms09) {
      if (m.kind != "SpiderMultusConfig") continue;
      EXPECT_EQ(m.doc["spec"]["sriov"]["enableRdma"], true) << example << " " << m.name;
      EXPECT_FALSE(m.doc["spec"]["sriov"].contains("rdmaIsolation")) << example;
      EXPECT_TRUE(Checker(kV09).Check(m.doc).empty()) << example;
      errors = Checker().Check(m.doc);
      ASSERT_EQ(errors.size(), 1u) << example;
      EXPECT_EQ(errors[0], "spec.sriov.enableRdma: unknown field") << example;
    }
  }
  // "0.9", "v0.9.13" are the same line; "1.2" the default one.
  for (const char* v : {"0.9", "v0.9.13"}) {
    auto ms = Build(AtRelease(Load("roce-sriov"), v));
    EXPECT_EQ(Find(ms, "SpiderMultusConfig", "roce-sriov")->doc["spec"]["sriov"]["enableRdma"],
              true)
        << v;
  }
  auto v12 = Build(AtRelease(Load("roce-sriov"), "1.2"));
  EXPECT_EQ(Find(v12, "SpiderMultusConfig", "roce-sriov")->doc["spec"]["sriov"]["rdmaIsolation"],
            true);
  // ibsriov has rdmaIsolation in both; macvlan has no rdmaResourceName in
  // v0.9 (its pods ask for the shared plugin's resource themselves).
  auto ib = Build(AtRelease(Load("ib-sriov"), kV09));
  EXPECT_EQ(Find(ib, "SpiderMultusConfig", "ib-sriov")->doc["spec"]["ibsriov"]["rdmaIsolation"],
            true);
  auto mac = Build(AtRelease(Load("roce-shared-macvlan"), kV09));
  EXPECT_FALSE(Find(mac, "SpiderMultusConfig", "macvlan-ens6f0np0")
                   ->doc["spec"]["macvlan"]
                   .contains("rdmaResourceName"));
  // rdmaResourceInject needs podResourceInject (v1.0): a warning, no value.
  auto hm = BuildHostManifests(AtRelease(Load("roce-sriov"), kV09), ManifestOptions());
  ASSERT_TRUE(hm.ok());
  EXPECT_FALSE(hm->helm_values.contains("spiderpoolController"));
  const std::string all = Warnings(*hm);
  EXPECT_NE(all.find("rdmaResourceInject needs Spiderpool v1.0 or later"), std::string::npos)
      << all;
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

// rdmaIsolation is always written: the CRD defaults differ (sriov false,
// ib-sriov true), and true needs the host in exclusive mode.
TEST(ManifestsTest, RdmaIsolationFollowsTheNetnsModeOnSriovAndIbSriov) {
  for (const char* example : {"roce-sriov", "ib-sriov"}) {
    const bool ib = std::string(example) == "ib-sriov";
    const std::string key = ib ? "ibsriov" : "sriov";
    const std::string name = ib ? "ib-sriov" : "roce-sriov";
    DesiredState d = Load(example);
    ASSERT_EQ(*d.rdma->netns_mode, "exclusive");
    auto ms = Build(d);
    ASSERT_NE(Find(ms, "SpiderMultusConfig", name), nullptr) << example;
    EXPECT_EQ(Find(ms, "SpiderMultusConfig", name)->doc["spec"][key]["rdmaIsolation"], true)
        << example;
    d.rdma->netns_mode = "shared";
    ms = Build(d);
    const json& c = Find(ms, "SpiderMultusConfig", name)->doc["spec"][key];
    ASSERT_TRUE(c.contains("rdmaIsolation")) << example;
    EXPECT_EQ(c["rdmaIsolation"], false) << example;
    // Multus flavor: the RDMA CNI in the chain only in exclusive mode.
    auto nads = Build(d, "multus");
    json conf = json::parse(
        Find(nads, "NetworkAttachmentDefinition", name)->doc["spec"]["config"].get<std::string>());
    EXPECT_FALSE(conf.contains("plugins")) << example;
  }
  // netnsMode not set and nothing discovered: the kernel's default, shared,
  // said as a warning.
  DesiredState d = Load("ib-sriov");
  d.rdma->netns_mode.reset();
  auto hm = BuildHostManifests(d, ManifestOptions());
  ASSERT_TRUE(hm.ok()) << hm.status().message();
  EXPECT_EQ(Find(hm->manifests, "SpiderMultusConfig", "ib-sriov")
                ->doc["spec"]["ibsriov"]["rdmaIsolation"],
            false);
  ASSERT_FALSE(hm->warnings.empty());
  EXPECT_NE(hm->warnings[0].find("spec.rdma.netnsMode is not set"), std::string::npos);
}

// With spec.kubernetes.nodeSelector the policy is the pool's: named after
// the nic, selecting the pool, identical on every node of it.
TEST(ManifestsTest, PoolPolicyIsNamedAfterTheNicAndSelectsThePool) {
  auto ms = Build(Load("roce-sriov"));
  const Manifest* p = Find(ms, "SriovNetworkNodePolicy", "roce-sriov-nic");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->doc["spec"]["nodeSelector"], json({{"kubernetes.io/os", "linux"}}));
  EXPECT_EQ(p->doc["spec"]["externallyManaged"], true);
  EXPECT_EQ(p->doc["spec"]["numVfs"], 12);
  EXPECT_EQ(p->doc["spec"]["linkType"], "eth");
  EXPECT_EQ(p->doc["spec"]["resourceName"], "mellanoxrdma");
  EXPECT_EQ(p->doc["spec"]["nicSelector"]["rootDevices"], json({"0000:af:00.0"}));
  // The operator reads policies only in its own namespace: Spiderpool's
  // install namespace of the guides by default.
  EXPECT_EQ(p->doc["metadata"]["namespace"], "kube-system");
}

// Without a pool the policy is the node's: "<nic>-<node>", pinned to the
// hostname, so that two nodes' manifests never overwrite each other.
TEST(ManifestsTest, NodePolicyIsNodeQualifiedAndPinnedToTheHostname) {
  DesiredState d = Load("roce-sriov");
  d.kubernetes->node_selector.clear();
  auto ms = Build(d);
  ASSERT_EQ(Find(ms, "SriovNetworkNodePolicy", "roce-sriov-nic"), nullptr);
  const Manifest* p = Find(ms, "SriovNetworkNodePolicy", "roce-sriov-nic-worker1");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->doc["spec"]["nodeSelector"], json({{"kubernetes.io/hostname", "worker1"}}));
  EXPECT_NE(Find(ms, "ConfigMap", "nccl-env-worker1"), nullptr);  // per node too

  // The operator's namespace as host.yaml says.
  d.kubernetes->sriov_operator_namespace = "sriov-network-operator";
  ms = Build(d);
  EXPECT_EQ(
      Find(ms, "SriovNetworkNodePolicy", "roce-sriov-nic-worker1")->doc["metadata"]["namespace"],
      "sriov-network-operator");

  // A node name that makes the policy name longer than Kubernetes allows.
  d.name = std::string(240, 'n') + ".example";
  auto bad = BuildManifests(d, ManifestOptions());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("is not a valid Kubernetes name"), std::string::npos)
      << bad.status().message();
  EXPECT_NE(bad.status().message().find("spec.kubernetes.nodeSelector"), std::string::npos);
}

// Names that are not Kubernetes names never reach the output.
TEST(ManifestsTest, InvalidObjectNamesAreErrors) {
  DesiredState d = Load("roce-sriov");
  d.multus_configs[0].name = "Roce_SRIOV";
  auto m = BuildManifests(d, ManifestOptions());
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("SpiderMultusConfig name \"Roce_SRIOV\""), std::string::npos)
      << m.status().message();
  d = Load("roce-sriov");
  d.multus_configs[0].namespace_name = "kube.system";
  m = BuildManifests(d, ManifestOptions());
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("namespace \"kube.system\""), std::string::npos);
}

TEST(ManifestsTest, MacvlanMasterAndSharedRdmaResource) {
  auto ms = Build(Load("roce-shared-macvlan"));
  const Manifest* m = Find(ms, "SpiderMultusConfig", "macvlan-ens6f1np1");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->doc["spec"]["macvlan"]["master"], json({"ens6f1np1"}));
  EXPECT_EQ(m->doc["spec"]["macvlan"]["rdmaResourceName"], "spidernet.io/hca_shared_devices");
  // podResourceInject: spiderpool's webhook lists configs by label, its docs
  // say annotation: both.
  EXPECT_EQ(m->doc["metadata"]["labels"]["cni.spidernet.io/rdma-resource-inject"], "rdma-network");
  EXPECT_EQ(m->doc["metadata"]["annotations"]["cni.spidernet.io/rdma-resource-inject"],
            "rdma-network");
  // Under Spiderpool its chart runs the RDMA shared device plugin from its
  // own ConfigMap: a standalone rdma-devices would be read by nothing.
  EXPECT_EQ(Find(ms, "ConfigMap", "rdma-devices"), nullptr);
  EXPECT_EQ(Find(ms, "SriovNetworkNodePolicy", "roce-nic0"), nullptr);  // no numVfs

  auto multus = Build(Load("roce-shared-macvlan"), "multus");
  const Manifest* cm = Find(multus, "ConfigMap", "rdma-devices");
  ASSERT_NE(cm, nullptr);
  EXPECT_EQ(cm->doc["metadata"]["namespace"], "kube-system");
  json c = json::parse(cm->doc["data"]["config.json"].get<std::string>());
  EXPECT_EQ(c["configList"][0]["selectors"]["ifNames"], json({"ens6f0np0", "ens6f1np1"}));
  EXPECT_EQ(c["configList"][0]["selectors"]["vendors"], json({"15b3"}));
  EXPECT_EQ(c["configList"][0]["rdmaHcaMax"], 500);
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

// Golden stdout per guide scenario and flavor: test/manifests/golden/
// <example>[.<flavor>].yaml. Regenerate after an intended change with
//   UPDATE_GOLDEN=1 bazel run //test/manifests:manifests_test -- --gtest_filter='*Golden*'
// (bazel run sets BUILD_WORKSPACE_DIRECTORY: the files are written there).
std::string Render(const std::string& example, const std::string& flavor, bool workload,
                   const std::string& version = "") {
  std::ostringstream got;
  ManifestOptions opt;
  opt.flavor = flavor;
  opt.with_test_workload = workload;
  Status s = WriteManifests(AtRelease(Load(example), version), opt, "", got);
  EXPECT_TRUE(s.ok()) << example << ": " << s.message();
  return got.str();
}

// The chart values (--helm-values) of a scenario, as the CLI writes them.
std::string RenderValues(const std::string& example, const std::string& version = "") {
  auto hm = BuildHostManifests(AtRelease(Load(example), version), ManifestOptions());
  EXPECT_TRUE(hm.ok()) << example << ": " << hm.status().message();
  return hm.ok() ? JsonToYaml(hm->helm_values) : "";
}

TEST(ManifestsTest, GoldenHelmValuesEveryScenario) {
  for (const char* example : kExamples) {
    ExpectGolden(std::string("test/manifests/golden/") + example + ".values.yaml",
                 RenderValues(example));
    ExpectGolden(std::string("test/manifests/golden/") + example + ".v0.9.values.yaml",
                 RenderValues(example, kV09));
  }
}

// Every value written for v0.9 is a documented parameter of the v0.9.10
// chart (its values.yaml, verbatim in test/manifests/helm/v0.9/).
TEST(ManifestsTest, V09HelmValuesAreParametersOfTheV09Chart) {
  std::set<std::string> params;
  std::ifstream in("test/manifests/helm/v0.9/values-v0.9.10.yaml");
  ASSERT_TRUE(in);
  std::string line;
  while (std::getline(in, line)) {
    const size_t at = line.find("## @param ");
    if (at == std::string::npos) continue;
    std::istringstream ls(line.substr(at + 10));
    std::string key;
    ls >> key;
    params.insert(key);
  }
  ASSERT_GT(params.size(), 100u);
  EXPECT_EQ(params.count("rdma.rdmaSharedDevicePlugin.deviceConfig.ifNames"), 0u);
  size_t checked = 0;
  for (const char* example : kExamples) {
    auto hm = BuildHostManifests(AtRelease(Load(example), kV09), ManifestOptions());
    ASSERT_TRUE(hm.ok()) << example;
    std::map<std::string, json> leaves;
    CollectLeaves(hm->helm_values, "", &leaves);
    for (const auto& [path, v] : leaves) {
      EXPECT_EQ(params.count(path), 1u) << example << ": " << path << " is not a v0.9.10 parameter";
      ++checked;
    }
  }
  EXPECT_GT(checked, 5u);
}

// Every value --helm-values sets is a documented parameter of the pinned
// chart (test/manifests/helm/PROVENANCE.md), of the parameter's type.
std::map<std::string, std::string> ChartKeys() {
  std::map<std::string, std::string> keys;
  std::ifstream in("test/manifests/helm/spiderpool-chart-keys.txt");
  EXPECT_TRUE(in);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string key, type;
    ls >> key >> type;
    keys[key] = type;
  }
  return keys;
}

void CollectLeaves(const json& j, const std::string& path, std::map<std::string, json>* out) {
  if (j.is_object() && !j.empty()) {
    for (const auto& [k, v] : j.items()) CollectLeaves(v, path.empty() ? k : path + "." + k, out);
    return;
  }
  (*out)[path] = j;
}

std::string TypeOf(const json& v) {
  if (v.is_boolean()) return "bool";
  if (v.is_string()) return "string";
  if (v.is_number_integer()) return "int";
  if (v.is_array()) return "list";
  return "object";
}

TEST(ManifestsTest, HelmValuesAreDocumentedChartParametersOfTheirType) {
  const std::map<std::string, std::string> keys = ChartKeys();
  ASSERT_GT(keys.size(), 20u);
  size_t checked = 0;
  for (const char* example : kExamples) {
    auto hm = BuildHostManifests(Load(example), ManifestOptions());
    ASSERT_TRUE(hm.ok()) << example;
    std::map<std::string, json> leaves;
    CollectLeaves(hm->helm_values, "", &leaves);
    for (const auto& [path, v] : leaves) {
      auto it = keys.find(path);
      ASSERT_NE(it, keys.end()) << example << ": " << path << " is not a chart parameter";
      EXPECT_EQ(TypeOf(v), it->second) << example << ": " << path;
      ++checked;
    }
  }
  EXPECT_GT(checked, 10u);
  // The chart's deviceConfig.vendors/deviceIDs are one string each: two
  // device IDs among the shared NICs cannot be expressed.
  DesiredState d = Load("roce-shared-macvlan");
  d.nics[1].selector.device_id = "101b";
  auto two = BuildHostManifests(d, ManifestOptions());
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("deviceConfig.deviceIDs is one value"), std::string::npos)
      << two.status().message();
  // And a missing one would leave the chart's ConnectX-5 default in place.
  d = Load("roce-shared-macvlan");
  d.nics[0].selector.device_id.reset();
  auto none = BuildHostManifests(d, ManifestOptions());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("spec.nics[0].nicSelector.deviceID"), std::string::npos)
      << none.status().message();
  // Values go with what the scenario uses, and nothing else.
  auto sriov = BuildHostManifests(Load("roce-sriov"), ManifestOptions());
  ASSERT_TRUE(sriov.ok());
  EXPECT_EQ(sriov->helm_values["sriov"],
            json({{"install", true}, {"resourcePrefix", "spidernet.io"}}));
  EXPECT_FALSE(sriov->helm_values.contains("rdma"));
  EXPECT_FALSE(sriov->helm_values.contains("plugins"));  // sriov/rdma CNIs: the chart's own image
  EXPECT_EQ(sriov->helm_values["spiderpoolController"]["podResourceInject"]["enabled"], true);
  auto macvlan = BuildHostManifests(Load("roce-shared-macvlan"), ManifestOptions());
  ASSERT_TRUE(macvlan.ok());
  EXPECT_EQ(macvlan->helm_values["plugins"]["installCNI"], true);
  EXPECT_FALSE(macvlan->helm_values.contains("sriov"));
  EXPECT_EQ(macvlan->helm_values["rdma"]["rdmaSharedDevicePlugin"]["deviceConfig"]["ifNames"],
            json({"ens6f0np0", "ens6f1np1"}));
}

// spec.rails and nearGpu mean "the NIC nearest to GPU n": without the host's
// topology the selectors would match every NIC of the model on every rail.
TEST(ManifestsTest, NearGpuWithoutDiscoveredFactsIsAnError) {
  auto m = BuildManifests(Load("rails"), ManifestOptions());
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("spec.nics[0].nicSelector.nearGpu (from spec.rails, rail 1)"),
            std::string::npos)
      << m.status().message();
  EXPECT_NE(m.status().message().find("--root"), std::string::npos);
}

TEST(ManifestsTest, GoldenStdoutEveryScenario) {
  for (const char* example : kExamples) {
    for (const std::string& flavor : {std::string("spiderpool"), std::string("multus")}) {
      std::string file = std::string("test/manifests/golden/") + example +
                         (flavor == "spiderpool" ? "" : "." + flavor) + ".yaml";
      ExpectGolden(file, Render(example, flavor, /*workload=*/false));
    }
    // Per guide, on the guides' release too.
    ExpectGolden(std::string("test/manifests/golden/") + example + ".v0.9.yaml",
                 Render(example, "spiderpool", /*workload=*/false, kV09));
  }
  // The test workload, once (the same script in every scenario).
  ExpectGolden("test/manifests/golden/rails-8gpu.workload.yaml",
               Render("rails-8gpu", "spiderpool", /*workload=*/true));
}

// Same input, same bytes: key order and document order do not depend on
// hashing or discovery order.
TEST(ManifestsTest, RenderingTwiceIsIdentical) {
  for (const char* example : kExamples) {
    EXPECT_EQ(Render(example, "spiderpool", true), Render(example, "spiderpool", true)) << example;
    EXPECT_EQ(Render(example, "multus", false), Render(example, "multus", false)) << example;
  }
}

TEST(ManifestsTest, GuideValuesRoceShared) {
  auto ms = Build(Load("roce-shared-macvlan"));
  const Manifest* pool = Find(ms, "SpiderIPPool", "v4-81");
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->doc["spec"]["ips"], json::array({"172.81.0.100-172.81.0.120"}));
  EXPECT_EQ(pool->doc["spec"]["gateway"], "172.81.0.1");
  const Manifest* mc = Find(ms, "SpiderMultusConfig", "macvlan-ens6f0np0");
  ASSERT_NE(mc, nullptr);
  EXPECT_EQ(mc->doc["spec"]["macvlan"]["master"], json::array({"ens6f0np0"}));
  auto multus = Build(Load("roce-shared-macvlan"), "multus");
  const Manifest* cm = Find(multus, "ConfigMap", "rdma-devices");
  ASSERT_NE(cm, nullptr);
  json c = json::parse(cm->doc["data"]["config.json"].get<std::string>());
  EXPECT_EQ(c["configList"][0]["selectors"]["vendors"], json::array({"15b3"}));
  EXPECT_EQ(c["configList"][0]["selectors"]["deviceIDs"], json::array({"1017"}));
  EXPECT_EQ(c["configList"][0]["rdmaHcaMax"], 500);
  // No VFs in this scenario: no SR-IOV device plugin config, no policy.
  EXPECT_EQ(Find(ms, "ConfigMap", "sriovdp-config"), nullptr);
  for (const auto& m : ms) EXPECT_NE(m.kind, "SriovNetworkNodePolicy");
}

TEST(ManifestsTest, SriovDevicePluginConfig) {
  // Under the sriov-network-operator (spiderpool flavor: sriov.install) the
  // operator writes the device plugin's config from the policies.
  EXPECT_EQ(Find(Build(Load("roce-sriov")), "ConfigMap", "sriovdp-config"), nullptr);
  auto ms = Build(Load("roce-sriov"), "multus");
  const Manifest* cm = Find(ms, "ConfigMap", "sriovdp-config");
  ASSERT_NE(cm, nullptr);
  EXPECT_EQ(cm->doc["metadata"]["namespace"], "kube-system");
  json c = json::parse(cm->doc["data"]["config.json"].get<std::string>());
  ASSERT_EQ(c["resourceList"].size(), 1u);
  const json& r = c["resourceList"][0];
  EXPECT_EQ(r["resourcePrefix"], "spidernet.io");
  EXPECT_EQ(r["selectors"]["vendors"], json::array({"15b3"}));
  EXPECT_EQ(r["selectors"]["devices"], json::array({"1018"}));  // the ConnectX-5 VF
  EXPECT_EQ(r["selectors"]["linkTypes"], json::array({"ether"}));
  EXPECT_EQ(r["selectors"]["isRdma"], true);

  auto ib = Build(Load("ib-sriov"), "multus");
  cm = Find(ib, "ConfigMap", "sriovdp-config");
  ASSERT_NE(cm, nullptr);
  c = json::parse(cm->doc["data"]["config.json"].get<std::string>());
  EXPECT_EQ(c["resourceList"][0]["resourceName"], "mellanoxibsriov");
  EXPECT_EQ(c["resourceList"][0]["selectors"]["linkTypes"], json::array({"infiniband"}));
  EXPECT_EQ(c["resourceList"][0]["selectors"]["rootDevices"], json::array({"0000:86:00.0"}));
}

TEST(ManifestsTest, TestWorkloadOnlyWhenAsked) {
  auto ms = Build(Load("roce-sriov"));
  for (const auto& m : ms) EXPECT_NE(m.kind, "DaemonSet");
  ManifestOptions opt;
  opt.with_test_workload = true;
  auto with = BuildManifests(Load("roce-sriov"), opt);
  ASSERT_TRUE(with.ok()) << with.status().message();
  const Manifest* ds = Find(*with, "DaemonSet", "rdma-test");
  ASSERT_NE(ds, nullptr);
  const json& tmpl = ds->doc["spec"]["template"];
  EXPECT_EQ(ds->doc["spec"]["selector"]["matchLabels"], tmpl["metadata"]["labels"]);
  const json& ctr = tmpl["spec"]["containers"][0];
  EXPECT_EQ(ctr["securityContext"]["capabilities"]["add"], json::array({"IPC_LOCK"}));
  // The pods' NCCL environment, from the ConfigMap in the DaemonSet's namespace.
  EXPECT_EQ(ctr["envFrom"][0]["configMapRef"]["name"], "nccl-env-linux");
  const Manifest* env = Find(*with, "ConfigMap", "nccl-env-linux");
  ASSERT_NE(env, nullptr);
  EXPECT_EQ(env->doc["metadata"]["namespace"], ds->doc["metadata"]["namespace"]);
  // Exclusive mode: a pod's netns holds only its own VFs' RDMA devices, under
  // host names no manifest can know: the driver prefix selects exactly them.
  EXPECT_EQ(env->doc["data"]["NCCL_IB_HCA"], "mlx5");
  EXPECT_EQ(env->doc["data"]["NCCL_SOCKET_IFNAME"], "=eth0");
  EXPECT_FALSE(env->doc["data"].contains("NCCL_IB_GID_INDEX"));
  ASSERT_FALSE(ctr["resources"]["limits"].empty());
  // Every multus config is attached, and each resource it needs is asked for.
  DesiredState d = Load("roce-sriov");
  std::string nets = tmpl["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"];
  for (const auto& mc : d.multus_configs) {
    EXPECT_NE(nets.find(mc.namespace_name + "/" + mc.name), std::string::npos) << nets;
    for (const auto& nic : d.nics) {
      if (nic.name == mc.nic && nic.resource_name) {
        EXPECT_EQ(ctr["resources"]["limits"]["spidernet.io/" + *nic.resource_name], 1);
      }
    }
  }
  // Shared mode: the shared device plugin's resource instead.
  auto shared = BuildManifests(Load("roce-shared-macvlan"), opt);
  ASSERT_TRUE(shared.ok());
  ds = Find(*shared, "DaemonSet", "rdma-test");
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->doc["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"],
            json({{"spidernet.io/hca_shared_devices", 1}}));
}

// nccl-env-* goes where the workloads run (a pod reads ConfigMaps of its own
// namespace only); without workloadNamespaces, a warning says where it is.
TEST(ManifestsTest, NcclEnvLandsInEveryWorkloadNamespace) {
  DesiredState d = Load("rails-8gpu");
  d.kubernetes->workload_namespaces = {"team-a", "team-b"};
  auto hm = BuildHostManifests(d, ManifestOptions());
  ASSERT_TRUE(hm.ok()) << hm.status().message();
  std::vector<std::string> where;
  for (const auto& m : hm->manifests) {
    if (m.kind == "ConfigMap" && m.name == "nccl-env-linux") where.push_back(m.Namespace());
  }
  EXPECT_EQ(where, (std::vector<std::string>{"team-a", "team-b"}));
  for (const auto& w : hm->warnings)
    EXPECT_EQ(w.find("workloadNamespaces"), std::string::npos) << w;

  d.kubernetes->workload_namespaces.clear();
  hm = BuildHostManifests(d, ManifestOptions());
  ASSERT_TRUE(hm.ok());
  EXPECT_EQ(Find(hm->manifests, "ConfigMap", "nccl-env-linux")->Namespace(), "spiderpool");
  const std::string all = Warnings(*hm);
  EXPECT_NE(all.find("nccl-env-linux is written into spiderpool"), std::string::npos) << all;
  EXPECT_NE(all.find("spec.kubernetes.workloadNamespaces"), std::string::npos) << all;
  // The test workload runs in the first workload namespace, with the env.
  d.kubernetes->workload_namespaces = {"team-a"};
  ManifestOptions opt;
  opt.with_test_workload = true;
  auto w = BuildManifests(d, opt);
  ASSERT_TRUE(w.ok());
  const Manifest* ds = Find(*w, "DaemonSet", "rdma-test");
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->Namespace(), "team-a");
  EXPECT_EQ(
      ds->doc["spec"]["template"]["spec"]["containers"][0]["envFrom"][0]["configMapRef"]["name"],
      "nccl-env-linux");
}

// The data of the pods' NCCL environment ConfigMap (nccl-env-<os>) of `d`.
json NcclEnv(const DesiredState& d) {
  auto hm = BuildHostManifests(d, ManifestOptions());
  EXPECT_TRUE(hm.ok()) << hm.status().message();
  if (!hm.ok()) return json();
  for (const auto& m : hm->manifests) {
    if (m.kind == "ConfigMap" && m.name.rfind("nccl-env-", 0) == 0) return m.doc["data"];
  }
  return json();
}

// NCCL_IB_TC from host.yaml's RoCE QoS: traffic class = DSCP << 2; priority
// p is DSCP 8p+2 under mlx5's default map (26 for 3): 104, 106 with ECN.
TEST(ManifestsTest, NcclIbTcFromTheHostsRoceQos) {
  DesiredState d = Load("roce-shared-macvlan");
  EXPECT_FALSE(NcclEnv(d).contains("NCCL_IB_TC"));  // no roce QoS in host.yaml: NCCL's default
  for (auto& nic : d.nics)
    nic.roce = NicRoceSpec{"dscp", std::vector<int>{3}, std::vector<int>{3}, std::nullopt};
  EXPECT_EQ(NcclEnv(d)["NCCL_IB_TC"], "106");
  for (auto& nic : d.nics) nic.roce->ecn.reset();
  EXPECT_EQ(NcclEnv(d)["NCCL_IB_TC"], "104");
  for (auto& nic : d.nics) nic.roce->pfc = std::vector<int>{5};
  EXPECT_EQ(NcclEnv(d)["NCCL_IB_TC"], std::to_string((5 * 8 + 2) << 2));
  // Several PFC priorities: the one with ECN.
  for (auto& nic : d.nics) {
    nic.roce->pfc = std::vector<int>{3, 4};
    nic.roce->ecn = std::vector<int>{3};
  }
  EXPECT_EQ(NcclEnv(d)["NCCL_IB_TC"], "106");
  // PCP trust: the priority is the VLAN PCP, from the service level.
  for (auto& nic : d.nics) nic.roce->trust = "pcp";
  EXPECT_EQ(NcclEnv(d)["NCCL_IB_SL"], "3");
  EXPECT_FALSE(NcclEnv(d).contains("NCCL_IB_TC"));
  // Rails that disagree: no value, a warning naming them.
  for (auto& nic : d.nics) nic.roce->trust = "dscp";
  d.nics[1].roce->pfc = std::vector<int>{4};
  d.nics[1].roce->ecn.reset();
  EXPECT_FALSE(NcclEnv(d).contains("NCCL_IB_TC"));
  const std::string all = WarningsOf(d);
  EXPECT_THAT(all, HasSubstr("NCCL_IB_TC not set"));
  EXPECT_THAT(all, HasSubstr("roce-nic0: priority 3, traffic class 106; roce-nic1: priority 4, "
                             "traffic class 136"));
}

// roce.tos and roce.dscpMap: NCCL_IB_TC stays the traffic class that lands on
// the PFC priority, the device's default ToS when host.yaml sets one.
TEST(ManifestsTest, NcclIbTcFollowsTosAndDscpMap) {
  DesiredState d = Load("roce-shared-macvlan");
  for (auto& nic : d.nics) {
    nic.roce = NicRoceSpec{"dscp", std::vector<int>{3}, std::vector<int>{3}, std::nullopt};
    nic.roce->dscp_map = std::map<int, int>{{26, 5}, {3, 3}};  // 26 moved away; SONiC's 3 -> 3
  }
  EXPECT_EQ(NcclEnv(d)["NCCL_IB_TC"], std::to_string((3 << 2) | 2));
  for (auto& nic : d.nics) nic.roce->dscp_map = std::map<int, int>{{26, 5}};
  EXPECT_EQ(NcclEnv(d)["NCCL_IB_TC"], std::to_string((24 << 2) | 2));  // the lowest default DSCP of 3
  for (auto& nic : d.nics) nic.roce->tos = 14;
  EXPECT_EQ(NcclEnv(d)["NCCL_IB_TC"], "14");  // the device's default ToS
}

// The test workload does what the guides end with: per pod, the RDMA devices
// and GIDs; between two pods on two nodes, ib_write_bw/ib_read_lat per rail,
// one line each, the control connection on the default network.
TEST(ManifestsTest, TestWorkloadMeasuresEveryRailBetweenTwoNodes) {
  ManifestOptions opt;
  opt.with_test_workload = true;
  auto w = BuildManifests(Load("rails-8gpu"), opt);
  ASSERT_TRUE(w.ok()) << w.status().message();
  const Manifest* ds = Find(*w, "DaemonSet", "rdma-test");
  const Manifest* svc = Find(*w, "Service", "rdma-test");
  ASSERT_NE(ds, nullptr);
  ASSERT_NE(svc, nullptr);
  EXPECT_EQ(svc->Namespace(), ds->Namespace());
  EXPECT_EQ(svc->doc["spec"]["selector"], ds->doc["spec"]["template"]["metadata"]["labels"]);
  EXPECT_EQ(svc->doc["spec"]["publishNotReadyAddresses"], true);
  const json& ctr = ds->doc["spec"]["template"]["spec"]["containers"][0];
  ASSERT_EQ(ctr["command"].size(), 3u);
  const std::string script = ctr["command"][2];
  for (const char* step : {"rdma link show", "ip -br addr show", "/gids/", "RoCE v2",
                           "ib_write_bw -d", "ib_read_lat -d", "getent ahostsv4 \"$SERVICE\"",
                           "echo \"rail $k $n $dev gid $shown -> $next"}) {
    EXPECT_NE(script.find(step), std::string::npos) << step;
  }
  bool service_env = false;
  for (const auto& e : ctr["env"]) {
    if (e["name"] == "SERVICE") {
      service_env = true;
      EXPECT_EQ(e["value"], "rdma-test." + ds->Namespace() + ".svc");
    }
  }
  EXPECT_TRUE(service_env);
  // The script parses as POSIX sh (dash -n when present, else sh -n).
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/rdma-test.sh";
  {
    std::ofstream f(path);
    f << script;
  }
  const std::string cmd =
      "if command -v dash >/dev/null; then dash -n " + path + "; else sh -n " + path + "; fi";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << script;
}

// What the operator needs before the policies work is said with them; the
// chart values file names its release namespace.
TEST(ManifestsTest, OperatorPrerequisitesAndTheReleaseNamespace) {
  std::string out = Render("rails-8gpu", "spiderpool", false);
  const size_t policy = out.find("kind: SriovNetworkNodePolicy");
  const size_t header = out.find("configDaemonNodeSelector");
  ASSERT_NE(header, std::string::npos) << out;
  EXPECT_LT(header, policy);
  EXPECT_NE(out.find("node-role.kubernetes.io/worker"), std::string::npos);
  EXPECT_NE(out.find("provision the host"), std::string::npos);
  EXPECT_EQ(Render("roce-shared-macvlan", "spiderpool", false).find("configDaemonNodeSelector"),
            std::string::npos);  // no operator in that guide

  auto hm = BuildHostManifests(Load("rails-8gpu"), ManifestOptions());
  ASSERT_TRUE(hm.ok());
  EXPECT_EQ(hm->release_namespace, "spiderpool");
  EXPECT_NE(HelmValuesHeader(*hm, "v.yaml").find("-n spiderpool --reuse-values -f v.yaml"),
            std::string::npos);
  // rdmaResourceInject with the policies left in kube-system while the
  // multus configs are elsewhere: the operator never sees them.
  DesiredState d = Load("rails-8gpu");
  d.kubernetes->sriov_operator_namespace = "kube-system";
  EXPECT_THAT(WarningsOf(d), HasSubstr("spec.kubernetes.sriovOperatorNamespace: the "
                                       "SriovNetworkNodePolicies go to kube-system"));
}

// --flavor multus says what it changes: each field it cannot carry is a
// warning naming it.
TEST(ManifestsTest, MultusFlavorWarnsForEveryFieldItDrops) {
  DesiredState d = Load("roce-shared-macvlan");
  d.multus_configs[0].vlan = 81;
  d.ip_pools[0].ips.push_back("172.81.0.200-172.81.0.210");
  d.multus_configs[1].ippools.ipv6 = {"v6"};
  d.ip_pools.push_back(IpPoolSpec{"v6", "fd00:82::/64", {}, std::nullopt, std::nullopt, {}});
  ManifestOptions opt;
  opt.flavor = "multus";
  auto hm = BuildHostManifests(d, opt);
  ASSERT_TRUE(hm.ok()) << hm.status().message();
  const std::string all = Warnings(*hm);
  for (const char* want :
       {"spec.multusConfigs[0].vlan: --flavor multus drops it",
        "spec.ipPools[0].ips: --flavor multus (whereabouts) takes the first range",
        "spec.multusConfigs[1].ippools: --flavor multus uses whereabouts IPAM "
        "with the first pool only",
        "spec.ipPools[0].gateway: --flavor multus cannot express the pod's routes"}) {
    EXPECT_NE(all.find(want), std::string::npos) << want << "\n" << all;
  }
  // The Spiderpool flavor carries all of it: none of these warnings.
  hm = BuildHostManifests(d, ManifestOptions());
  ASSERT_TRUE(hm.ok());
  for (const auto& w : hm->warnings) EXPECT_EQ(w.find("--flavor multus"), std::string::npos) << w;
}

TEST(ManifestsTest, FileNames) {
  Manifest m{"SriovNetworkNodePolicy", "gpu1-nic", json::object()};
  EXPECT_EQ(ManifestFileName(m), "sriovnetworknodepolicy-gpu1-nic.yaml");
  // Issue 38 item 11: a namespaced object's name always has its namespace,
  // not only when another object shares kind and name.
  Manifest n{"SpiderMultusConfig", "gpu1-sriov", {{"metadata", {{"namespace", "spiderpool"}}}}};
  EXPECT_EQ(ManifestFileName(n), "spidermultusconfig-spiderpool-gpu1-sriov.yaml");
  EXPECT_EQ(ManifestFileNames({n}), std::vector<std::string>{"spidermultusconfig-spiderpool-gpu1-sriov.yaml"});
}

}  // namespace
}  // namespace provisioner::manifests

namespace provisioner::manifests {
namespace {

// What the sriov-network-operator v1.2.0 admission webhook (the operator
// Spiderpool v0.9.10 bundles) refuses beyond the CRD's schema, as its
// pkg/webhook/validate.go (tag v1.2.0) checks a SriovNetworkNodePolicy:
// staticValidateSriovNetworkNodePolicy (resourceName characters, a
// non-empty nicSelector, the pfNames "#first-last" ranges inside numVfs,
// vfio-pci with isRdma, linkType ib without isRdma) and, of the dynamic
// checks, what a policy alone decides (numVfs 0, more than 128 VFs on a
// Mellanox PF: validatePolicyForNodeState). Vendor/device support lists and
// the node state are the cluster's.
std::vector<std::string> WebhookV120Refusals(const json& policy) {
  std::vector<std::string> out;
  const json& spec = policy["spec"];
  const std::string res = spec.value("resourceName", "");
  if (res.empty() || res.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                           "0123456789_") != std::string::npos) {
    out.push_back("resource name \"" + res + "\" contains invalid characters");
  }
  const json sel = spec.value("nicSelector", json::object());
  if (sel.value("vendor", "").empty() && sel.value("deviceID", "").empty() &&
      sel.value("pfNames", json::array()).empty() &&
      sel.value("rootDevices", json::array()).empty() && sel.value("netFilter", "").empty()) {
    out.push_back("at least one of vendor, deviceID, pfNames, rootDevices or netFilter");
  }
  const long long num_vfs = spec.value("numVfs", 0LL);
  for (const auto& pf : sel.value("pfNames", json::array())) {
    const std::string p = pf.get<std::string>();
    const size_t hash = p.find('#');
    if (hash == std::string::npos) continue;
    const std::string range = p.substr(hash + 1);
    const size_t dash = range.find('-');
    if (p.find('#', hash + 1) != std::string::npos || dash == std::string::npos ||
        range.find('-', dash + 1) != std::string::npos) {
      out.push_back(p + ": incorrect separator or range");
      continue;
    }
    const long long first = std::atoll(range.substr(0, dash).c_str());
    const long long last = std::atoll(range.substr(dash + 1).c_str());
    if (last < first) out.push_back(p + ": end range smaller than start range");
    if (!(last < num_vfs)) out.push_back(p + ": end range exceeds the maximum VF index");
  }
  const bool is_rdma = spec.value("isRdma", false);
  if (spec.value("deviceType", "") == "vfio-pci" && is_rdma) {
    out.push_back("'deviceType: vfio-pci' conflicts with 'isRdma: true'");
  }
  std::string link = spec.value("linkType", "");
  for (char& c : link) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (link == "ib" && !is_rdma) out.push_back("'linkType: ib or IB' requires 'isRdma: true'");
  if (num_vfs == 0) out.push_back("numVfs(0) is not allowed");
  if (num_vfs > 128 && sel.value("vendor", "") == "15b3") {
    out.push_back("numVfs exceeds the maximum allowed value(128)");
  }
  return out;
}

// Issue 35 item 8: every policy for Spiderpool v0.9 is one its bundled
// operator's webhook admits, and the webhook model refuses what v1.2.0
// refuses.
TEST(SpiderpoolV09Operator, EveryPolicyPassesTheV120Webhook) {
  int policies = 0;
  for (const char* e : kExamples) {
    auto ms = BuildManifests(AtRelease(Load(e), kV09), ManifestOptions());
    ASSERT_TRUE(ms.ok()) << e << ": " << ms.status().message();
    for (const Manifest& m : *ms) {
      if (m.kind != "SriovNetworkNodePolicy") continue;
      ++policies;
      EXPECT_FALSE(m.doc["spec"].contains("externallyManaged")) << e << " " << m.name;
      std::vector<std::string> r = WebhookV120Refusals(m.doc);
      EXPECT_TRUE(r.empty()) << e << " " << m.name << ": " << (r.empty() ? "" : r[0]);
    }
  }
  EXPECT_GT(policies, 8);
  // The model refuses what v1.2.0 refuses.
  json bad = {{"spec",
               {{"resourceName", "a-b"},
                {"nicSelector", {{"pfNames", {"ens1f0#2-8"}}}},
                {"numVfs", 8},
                {"linkType", "IB"},
                {"deviceType", "vfio-pci"}}}};
  EXPECT_EQ(WebhookV120Refusals(bad).size(), 3u);  // name, range, ib without isRdma
}

// linkType ib without isRdma: v1.2.0's webhook refuses it, so on v0.9 the
// policy says isRdma: true (InfiniBand VFs are RDMA devices), and an
// explicit isRdma: false is an error naming the field; v1.x keeps it as
// host.yaml says.
TEST(SpiderpoolV09Operator, InfiniBandPoliciesCarryIsRdma) {
  DesiredState d = Load("ib-sriov");
  size_t ib = 0;
  while (ib < d.nics.size() && d.nics[ib].link_type != "ib") ++ib;
  ASSERT_LT(ib, d.nics.size());
  d.nics[ib].is_rdma.reset();
  auto v09 = BuildManifests(AtRelease(d, kV09), ManifestOptions());
  ASSERT_TRUE(v09.ok()) << v09.status().message();
  const Manifest* p = nullptr;
  for (const Manifest& m : *v09) {
    if (m.kind == "SriovNetworkNodePolicy") p = &m;
  }
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->doc["spec"].value("isRdma", false), true);
  EXPECT_TRUE(WebhookV120Refusals(p->doc).empty());
  auto v1 = BuildManifests(d, ManifestOptions());
  ASSERT_TRUE(v1.ok());
  for (const Manifest& m : *v1) {
    if (m.kind == "SriovNetworkNodePolicy") {
      EXPECT_FALSE(m.doc["spec"].contains("isRdma"));
    }
  }
  d.nics[ib].is_rdma = false;
  auto refused = BuildManifests(AtRelease(d, kV09), ManifestOptions());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("spec.nics[" + std::to_string(ib) +
                                            "].isRdma: false with linkType ib"),
            std::string::npos)
      << refused.status().message();
}

// Every Spiderpool release through v1.2.x bundles an operator (v1.3.0 or
// earlier) that replaces the IB VF GUIDs apply sets: a warning there, none
// on a later line.
TEST(SpiderpoolV09Operator, InfiniBandVfsWarnWhereTheBundledOperatorReplacesGuids) {
  const DesiredState d = Load("ib-sriov");
  for (const char* v : {"v0.9.10", "v1.0", "1.2", "v1.2.2", "v1.3", "v1.10"}) {
    auto hm = BuildHostManifests(AtRelease(d, v), ManifestOptions());
    ASSERT_TRUE(hm.ok()) << v << ": " << hm.status().message();
    bool warned = false;
    for (const std::string& w : hm->warnings) {
      warned =
          warned || w.find("replaces the VF GUIDs provisioner apply sets") != std::string::npos;
    }
    const bool old = std::string(v).find("1.3") == std::string::npos &&
                     std::string(v).find("1.10") == std::string::npos;
    EXPECT_EQ(warned, old) << v;
  }
}

}  // namespace
}  // namespace provisioner::manifests
