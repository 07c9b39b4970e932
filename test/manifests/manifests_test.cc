// provisioner manifests: every document for every example validates against
// its CRD (strict: unknown fields are errors), plus specific values and a
// golden stdout.
#include "engine/manifests/manifests.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "engine/config/loader.h"
#include "engine/output/render.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/manifests/crd_checker.h"
#include "test/manifests/golden.h"

namespace provisioner::manifests {
namespace {

using nlohmann::json;
using provisioner::testing::CrdChecker;
using provisioner::testing::ExpectGolden;

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
    ManifestOptions opt;
    opt.with_test_workload = true;
    auto w = BuildManifests(d, opt);
    ASSERT_TRUE(w.ok()) << e << ": " << w.status().message();
    ExpectValid(std::string(e) + " with workload", *w);
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
  EXPECT_EQ(
      Find(hm->manifests, "SpiderMultusConfig", "ib-sriov")->doc["spec"]["ibsriov"]["rdmaIsolation"],
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
  EXPECT_NE(m.status().message().find("SpiderMultusConfig name \"Roce_SRIOV\""),
            std::string::npos)
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
std::string Render(const std::string& example, const std::string& flavor, bool workload) {
  std::ostringstream got;
  ManifestOptions opt;
  opt.flavor = flavor;
  opt.with_test_workload = workload;
  Status s = WriteManifests(Load(example), opt, "", got);
  EXPECT_TRUE(s.ok()) << example << ": " << s.message();
  return got.str();
}

// The chart values (--helm-values) of a scenario, as the CLI writes them.
std::string RenderValues(const std::string& example) {
  auto hm = BuildHostManifests(Load(example), ManifestOptions());
  EXPECT_TRUE(hm.ok()) << example << ": " << hm.status().message();
  return hm.ok() ? JsonToYaml(hm->helm_values) : "";
}


TEST(ManifestsTest, GoldenHelmValuesEveryScenario) {
  for (const char* example : kExamples) {
    ExpectGolden(std::string("test/manifests/golden/") + example + ".values.yaml",
                 RenderValues(example));
  }
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
  EXPECT_EQ(sriov->helm_values["sriov"], json({{"install", true}, {"resourcePrefix", "spidernet.io"}}));
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
  }
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

TEST(ManifestsTest, FileNames) {
  Manifest m{"SriovNetworkNodePolicy", "gpu1-nic", json::object()};
  EXPECT_EQ(ManifestFileName(m), "sriovnetworknodepolicy-gpu1-nic.yaml");
}

}  // namespace
}  // namespace provisioner::manifests
