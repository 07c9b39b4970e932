// provisioner manifests --root: the PF netdev (macvlan master, device plugin
// ifNames) and the policy's rootDevices come from discovery when host.yaml
// does not name them.
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "engine/config/checks.h"
#include "engine/config/loader.h"
#include "engine/core/engine.h"
#include "engine/host/host_fs.h"
#include "engine/manifests/manifests.h"
#include "engine/model/selector.h"
#include "engine/module/clock.h"
#include "engine/module/registry.h"
#include "engine/output/render.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/manifests/crd_checker.h"
#include "test/manifests/golden.h"
#include "test/support/ttar.h"

namespace provisioner::manifests {
namespace {

using nlohmann::json;

class NoProgress final : public Progress {
 public:
  void Step(std::string_view) override {}
};

HostFacts DiscoverTree(const std::string& ttar, const std::string& name) {
  std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  Status s = provisioner::testing::ExtractTtar(ttar, dir);
  EXPECT_TRUE(s.ok()) << s.message();
  auto fs = NewLocalHostFs(dir);
  auto modules = ModuleRegistry::CreateAll();
  NoProgress progress;
  HostContext ctx;
  ctx.fs = fs.get();
  ctx.clock = &RealClock();
  ctx.progress = &progress;
  auto facts = Discover(modules, ctx);
  EXPECT_TRUE(facts.ok()) << facts.status().message();
  return facts.ok() ? *facts : HostFacts();
}

// The SR-IOV device plugin's config.json (its ConfigMap sriovdp-config);
// null, failing the test, when there is none.
json DevicePluginConfig(const std::vector<Manifest>& ms) {
  for (const auto& m : ms) {
    if (m.kind == "ConfigMap" && m.name == "sriovdp-config") {
      return json::parse(m.doc["data"]["config.json"].get<std::string>());
    }
  }
  ADD_FAILURE() << "no ConfigMap sriovdp-config";
  return json();
}

// An example host.yaml on a checked-in tree: examples/<example>.yaml, the
// facts of examples/hosts/<tree>.ttar (discovered in TEST_TMPDIR/<dir>) and
// manifest options that carry them. loaded: the example loaded.
struct ExampleOnTree {
  ExampleOnTree(const std::string& example, const std::string& tree, const std::string& dir)
      : facts(DiscoverTree("examples/hosts/" + tree + ".ttar", dir)) {
    LoadResult r = LoadDesiredStateFromFile("examples/" + example + ".yaml");
    for (const auto& d : r.diagnostics) ADD_FAILURE() << d.path << ": " << d.message;
    loaded = r.state.has_value();
    desired = r.state.value_or(DesiredState());
    opt.facts = &facts;
  }
  ExampleOnTree(const ExampleOnTree&) = delete;
  ExampleOnTree& operator=(const ExampleOnTree&) = delete;

  // BuildManifests of the example on the tree, which must load and build
  // (none when it does not).
  std::vector<Manifest> Manifests() const {
    EXPECT_TRUE(loaded);
    auto ms = BuildManifests(desired, opt);
    EXPECT_TRUE(ms.ok()) << ms.status().message();
    return ms.ok() ? *ms : std::vector<Manifest>{};
  }

  HostFacts facts;
  DesiredState desired;
  ManifestOptions opt;
  bool loaded = false;
};

const Manifest* Find(const std::vector<Manifest>& ms, const std::string& kind,
                     const std::string& name) {
  for (const auto& m : ms) {
    if (m.kind == kind && m.name == name) return &m;
  }
  return nullptr;
}

TEST(ManifestsDiscoveryTest, MacvlanMasterFromRootDevices) {
  ExampleOnTree t("roce-shared-macvlan", "cx5-roce", "cx5-roce");
  ASSERT_TRUE(t.loaded);
  DesiredState d = t.desired;
  d.nics[0].selector.pf_names.clear();
  d.nics[0].selector.root_devices = {"0000:af:00.0"};
  d.nics[1].selector.pf_names.clear();
  d.nics[1].selector.root_devices = {"0000:af:00.1"};

  auto hm = BuildHostManifests(d, t.opt);
  ASSERT_TRUE(hm.ok()) << hm.status().message();
  const auto& ms = hm->manifests;
  EXPECT_EQ(Find(ms, "SpiderMultusConfig", "macvlan-ens6f0np0")->doc["spec"]["macvlan"]["master"],
            json({"ens6f0np0"}));
  EXPECT_EQ(Find(ms, "SpiderMultusConfig", "macvlan-ens6f1np1")->doc["spec"]["macvlan"]["master"],
            json({"ens6f1np1"}));
  // The chart's plugin config narrowed to those PFs' netdevs.
  EXPECT_EQ(hm->helm_values["rdma"]["rdmaSharedDevicePlugin"]["deviceConfig"]["ifNames"],
            json({"ens6f0np0", "ens6f1np1"}));
  // Shared mode: the pod sees every RDMA device of the host but may open
  // only the PFs' ones: NCCL gets exactly those, with '=' (no prefix match).
  const Manifest* env = Find(ms, "ConfigMap", "nccl-env-linux");
  ASSERT_NE(env, nullptr);
  EXPECT_EQ(env->doc["data"]["NCCL_IB_HCA"], "=mlx5_0:1,mlx5_1:1");

  t.opt.flavor = "multus";
  auto multus = BuildManifests(d, t.opt);
  ASSERT_TRUE(multus.ok()) << multus.status().message();
  const Manifest* cm = Find(*multus, "ConfigMap", "rdma-devices");
  ASSERT_NE(cm, nullptr);
  json c = json::parse(cm->doc["data"]["config.json"].get<std::string>());
  EXPECT_EQ(c["configList"][0]["selectors"]["ifNames"], json({"ens6f0np0", "ens6f1np1"}));
}

// The operator's Mellanox plugin sets a dual-port card's NUM_OF_VFS from
// both ports' policies: a port left out of host.yaml is said.
TEST(ManifestsDiscoveryTest, TheOtherPortOfACardWithVfsIsNamed) {
  ExampleOnTree t("roce-sriov", "cx5-roce", "cx5-roce-ports");
  ASSERT_TRUE(t.loaded);
  auto hm = BuildHostManifests(t.desired, t.opt);
  ASSERT_TRUE(hm.ok()) << hm.status().message();
  std::string all;
  for (const auto& w : hm->warnings) all += w + "\n";
  EXPECT_NE(all.find("PF 0000:af:00.1 shares a card with 0000:af:00.0"), std::string::npos) << all;
  // Both ports in host.yaml: nothing to say.
  DesiredState both = t.desired;
  NicSpec second = both.nics[0];
  second.name = "roce-sriov-nic2";
  second.selector.root_devices = {"0000:af:00.1"};
  both.nics.push_back(second);
  hm = BuildHostManifests(both, t.opt);
  ASSERT_TRUE(hm.ok()) << hm.status().message();
  for (const auto& w : hm->warnings) EXPECT_EQ(w.find("shares a card"), std::string::npos) << w;
}

// A vendor/deviceID selector means every such NIC on every node of the pool:
// discovery does not narrow it to this host's PCI addresses (that would make
// the pool's policy differ from node to node).
TEST(ManifestsDiscoveryTest, VendorDeviceSelectorStaysAsWritten) {
  ExampleOnTree t("roce-sriov", "cx5-roce", "cx5-roce-2");
  ASSERT_TRUE(t.loaded);
  DesiredState d = t.desired;
  d.nics[0].selector.root_devices.clear();  // vendor 15b3 + deviceID 1017 only

  auto ms = BuildManifests(d, t.opt);
  ASSERT_TRUE(ms.ok()) << ms.status().message();
  const Manifest* p = Find(*ms, "SriovNetworkNodePolicy", "roce-sriov-nic");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->doc["spec"]["nicSelector"], json({{"vendor", "15b3"}, {"deviceID", "1017"}}));

  // A macvlan master must be a netdev: there discovery names the PFs'.
  LoadResult shared = LoadDesiredStateFromFile("examples/roce-shared-macvlan.yaml");
  ASSERT_TRUE(shared.state);
  DesiredState m = *shared.state;
  m.nics.resize(1);
  m.nics[0].selector.pf_names.clear();  // vendor 15b3 + deviceID 1017
  m.multus_configs.resize(1);
  auto mm = BuildManifests(m, t.opt);
  ASSERT_TRUE(mm.ok()) << mm.status().message();
  EXPECT_EQ(Find(*mm, "SpiderMultusConfig", "macvlan-ens6f0np0")->doc["spec"]["macvlan"]["master"],
            json({"ens6f0np0", "ens6f1np1"}));
}

// Each rail's policy selects exactly the PF nearest to its GPU.
TEST(ManifestsDiscoveryTest, RailsSelectEachRailsOwnPfOnTheHgxTree) {
  ExampleOnTree t("rails", "hgx-h100", "hgx");
  ASSERT_TRUE(t.loaded);
  ASSERT_EQ(t.facts.topology.gpus.size(), 8u);
  auto ms = BuildManifests(t.desired, t.opt);
  ASSERT_TRUE(ms.ok()) << ms.status().message();
  std::set<std::string> pfs;
  for (int n = 1; n <= 8; ++n) {
    const std::string name = "gpu" + std::to_string(n) + "-nic";
    const Manifest* p = Find(*ms, "SriovNetworkNodePolicy", name);
    ASSERT_NE(p, nullptr) << name;
    const json& roots = p->doc["spec"]["nicSelector"]["rootDevices"];
    ASSERT_EQ(roots.size(), 1u) << name;
    NicSpec nic = t.desired.nics[n - 1];
    std::vector<const PciFunction*> want = SelectPfs(nic, t.facts);
    ASSERT_EQ(want.size(), 1u) << name;
    EXPECT_EQ(roots[0], want[0]->pci_address) << name;
    pfs.insert(roots[0].get<std::string>());
  }
  EXPECT_EQ(pfs.size(), 8u);  // eight rails, eight PFs
}

// nics[].names (issue 28 item 4): what the cluster side names is what apply
// renames the PFs to, not the names the tree has now. The rails: each
// policy's pfNames (the pods' VFs keep their RDMA names: NCCL_IB_HCA stays
// the VF prefix). Shared RoCE: the device plugin's ifNames, the macvlan
// masters and NCCL_IB_HCA name the PFs' new names.
TEST(ManifestsDiscoveryTest, NamesAreWhatTheClusterSideUses) {
  ExampleOnTree t("rails", "hgx-h100", "hgx-names");
  ASSERT_TRUE(t.loaded);
  ASSERT_TRUE(t.desired.nics[0].names.has_value());
  auto ms = BuildManifests(t.desired, t.opt);
  ASSERT_TRUE(ms.ok()) << ms.status().message();
  for (int n = 1; n <= 8; ++n) {
    const std::string name = "gpu" + std::to_string(n) + "-nic";
    const Manifest* p = Find(*ms, "SriovNetworkNodePolicy", name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_EQ(p->doc["spec"]["nicSelector"]["pfNames"], json({"rail" + std::to_string(n)})) << name;
  }
  EXPECT_EQ(Find(*ms, "ConfigMap", "nccl-env-linux")->doc["data"]["NCCL_IB_HCA"], "mlx5");

  ExampleOnTree cx5("roce-shared-macvlan", "cx5-roce", "cx5-names");
  ASSERT_TRUE(cx5.loaded);
  DesiredState d = cx5.desired;
  for (int i = 0; i < 2; ++i) {
    d.nics[i].selector.pf_names.clear();
    d.nics[i].selector.root_devices = {"0000:af:00." + std::to_string(i)};
    d.nics[i].names =
        NicNamesSpec{"rail" + std::to_string(i + 1), "mlx5_rail" + std::to_string(i + 1)};
  }
  auto hm = BuildHostManifests(d, cx5.opt);
  ASSERT_TRUE(hm.ok()) << hm.status().message();
  const Manifest* env = Find(hm->manifests, "ConfigMap", "nccl-env-linux");
  ASSERT_NE(env, nullptr);
  EXPECT_EQ(env->doc["data"]["NCCL_IB_HCA"], "=mlx5_rail1:1,mlx5_rail2:1");
  EXPECT_EQ(Find(hm->manifests, "SpiderMultusConfig", "macvlan-ens6f0np0")
                ->doc["spec"]["macvlan"]["master"],
            json({"rail1"}));
  EXPECT_EQ(hm->helm_values["rdma"]["rdmaSharedDevicePlugin"]["deviceConfig"]["ifNames"],
            json({"rail1", "rail2"}))
      << hm->helm_values.dump();
}

// Golden: the 8-rail example on the HGX H100 tree (each rail's PF, the
// pods' NCCL environment) and the shared RoCE example on the ConnectX-5 tree
// (the chart values' ifNames, NCCL_IB_HCA from the PFs' devices).
// UPDATE_GOLDEN=1 bazel run //test/manifests:manifests_discovery_test rewrites them.

// The strict CRD check on every custom resource of an output.
void ExpectCrdValid(const std::string& label, const std::vector<Manifest>& ms) {
  static const provisioner::testing::CrdChecker* checker = [] {
    auto* c = new provisioner::testing::CrdChecker();
    for (const char* f : {"spiderpool.spidernet.io_spiderippools.yaml",
                          "spiderpool.spidernet.io_spidermultusconfigs.yaml",
                          "sriovnetwork.openshift.io_sriovnetworknodepolicies.yaml",
                          "nfd.k8s-sigs.io_nfd-api-crds.yaml"}) {
      std::string error;
      EXPECT_TRUE(c->AddCrdFile(std::string("test/manifests/crds/") + f, &error)) << error;
    }
    return c;
  }();
  int checked = 0;
  for (const auto& m : ms) {
    if (m.kind == "ConfigMap" || m.kind == "DaemonSet") continue;
    for (const auto& e : checker->Check(m.doc))
      ADD_FAILURE() << label << " " << m.kind << "/" << m.name << ": " << e;
    ++checked;
  }
  EXPECT_GT(checked, 0) << label;
}

TEST(ManifestsDiscoveryTest, GoldenWithDiscoveredFacts) {
  struct Case {
    const char* example;
    const char* tree;
  } cases[] = {{"rails", "hgx-h100"},
               {"roce-shared-macvlan", "cx5-roce"},
               {"roce-sriov", "cx5-roce"},
               {"vf-groups", "cx5-roce"}};
  for (const Case& c : cases) {
    ExampleOnTree t(c.example, c.tree, std::string("golden-") + c.example);
    ASSERT_TRUE(t.loaded);
    auto hm = BuildHostManifests(t.desired, t.opt);
    ASSERT_TRUE(hm.ok()) << hm.status().message();
    ExpectCrdValid(c.example, hm->manifests);
    const std::string base = std::string("test/manifests/golden/") + c.example + "." + c.tree;
    provisioner::testing::ExpectGolden(base + ".yaml", RenderManifests(hm->manifests));
    provisioner::testing::ExpectGolden(base + ".values.yaml", JsonToYaml(hm->helm_values));
  }
}

// Issue 28 item 3: a nic with vfGroups 0-3 netdevice and 4-7 vfio-pci makes
// two SriovNetworkNodePolicies, pfNames "<pf>#0-3" and "<pf>#4-7" and no
// rootDevices (the operator's webhook refuses two policies on one root
// device), each with its group's deviceType, isRdma and resource; the
// standalone device plugin gets one resource per group with the same ranged
// pfNames; the multus config takes its group's resource and isRdma.
TEST(ManifestsDiscoveryTest, VfGroupsMakeAPolicyAndAResourcePerGroup) {
  ExampleOnTree t("vf-groups", "cx5-roce", "cx5-roce-groups");
  const std::vector<Manifest> ms = t.Manifests();
  const Manifest* pods = Find(ms, "SriovNetworkNodePolicy", "split-nic-vf0-3");
  const Manifest* vms = Find(ms, "SriovNetworkNodePolicy", "split-nic-vf4-7");
  ASSERT_NE(pods, nullptr);
  ASSERT_NE(vms, nullptr);
  EXPECT_EQ(pods->doc["spec"]["nicSelector"]["pfNames"], json({"ens6f0np0#0-3"}));
  EXPECT_EQ(vms->doc["spec"]["nicSelector"]["pfNames"], json({"ens6f0np0#4-7"}));
  EXPECT_FALSE(pods->doc["spec"]["nicSelector"].contains("rootDevices"));
  EXPECT_EQ(pods->doc["spec"]["deviceType"], "netdevice");
  EXPECT_EQ(pods->doc["spec"]["isRdma"], true);
  EXPECT_EQ(pods->doc["spec"]["resourceName"], "podvfs");
  EXPECT_EQ(vms->doc["spec"]["deviceType"], "vfio-pci");
  EXPECT_FALSE(vms->doc["spec"].contains("isRdma"));
  EXPECT_EQ(vms->doc["spec"]["resourceName"], "vmvfs");
  for (const Manifest* p : {pods, vms}) {
    EXPECT_EQ(p->doc["spec"]["numVfs"], 8);
    EXPECT_FALSE(p->doc["spec"].contains("excludeTopology"));
  }
  const Manifest* smc = Find(ms, "SpiderMultusConfig", "pod-vfs");
  ASSERT_NE(smc, nullptr);
  EXPECT_EQ(smc->doc["spec"]["sriov"]["resourceName"], "spidernet.io/podvfs");
  EXPECT_EQ(smc->doc["spec"]["sriov"]["rdmaIsolation"], true);

  t.opt.flavor = "multus";
  auto mm = BuildHostManifests(t.desired, t.opt);
  ASSERT_TRUE(mm.ok()) << mm.status().message();
  json config = DevicePluginConfig(mm->manifests);
  ASSERT_EQ(config["resourceList"].size(), 2u);
  EXPECT_EQ(config["resourceList"][0]["resourceName"], "podvfs");
  EXPECT_EQ(config["resourceList"][0]["selectors"]["pfNames"], json({"ens6f0np0#0-3"}));
  EXPECT_EQ(config["resourceList"][0]["selectors"]["isRdma"], true);
  EXPECT_EQ(config["resourceList"][1]["resourceName"], "vmvfs");
  EXPECT_EQ(config["resourceList"][1]["selectors"]["pfNames"], json({"ens6f0np0#4-7"}));
  EXPECT_EQ(config["resourceList"][1]["selectors"]["drivers"], json({"vfio-pci"}));
  EXPECT_FALSE(config["resourceList"][1]["selectors"].contains("linkTypes"));
  const Manifest* nad = Find(mm->manifests, "NetworkAttachmentDefinition", "pod-vfs");
  ASSERT_NE(nad, nullptr);
  EXPECT_EQ(nad->doc["metadata"]["annotations"]["k8s.v1.cni.cncf.io/resourceName"],
            "spidernet.io/podvfs");
  provisioner::testing::ExpectGolden("test/manifests/golden/vf-groups.cx5-roce.multus.yaml",
                                     RenderManifests(mm->manifests));
}

// Issue 28 item 6: a nearGpu pick that allowRemote let cross NUMA nodes
// (GPU 0 on node 0, the NIC 0000:9d:00.0 on node 1 of the HGX tree) gets
// excludeTopology on its policy and its device-plugin resource, so that a
// single-numa-node pod can have it; the local pick of GPU 1 does not.
TEST(ManifestsDiscoveryTest, ExcludeTopologyOnlyForANumaRemotePick) {
  HostFacts facts = DiscoverTree("examples/hosts/hgx-h100.ttar", "hgx-numa");
  LoadResult r = LoadDesiredStateFromString(R"(apiVersion: provisioner/v1alpha1
kind: HostConfig
metadata:
  name: w
spec:
  nics:
    - name: far
      nicSelector: { nearGpu: 0, deviceID: "101d", rootDevices: ["0000:9d:00.0"], allowRemote: true }
      numVfs: 2
      resourceName: far
    - name: near
      nicSelector: { nearGpu: 1, vendor: "15b3", deviceID: "1021", allowRemote: true }
      numVfs: 2
      resourceName: near
  kubernetes:
    nodeSelector: { kubernetes.io/os: linux }
)",
                                            "numa.yaml");
  for (const auto& d : r.diagnostics) ADD_FAILURE() << d.path << ": " << d.message;
  ASSERT_TRUE(r.state);
  ManifestOptions opt;
  opt.facts = &facts;
  auto hm = BuildHostManifests(*r.state, opt);
  ASSERT_TRUE(hm.ok()) << hm.status().message();
  ExpectCrdValid("numa", hm->manifests);
  const Manifest* far = Find(hm->manifests, "SriovNetworkNodePolicy", "far");
  const Manifest* near = Find(hm->manifests, "SriovNetworkNodePolicy", "near");
  ASSERT_NE(far, nullptr);
  ASSERT_NE(near, nullptr);
  EXPECT_EQ(far->doc["spec"]["excludeTopology"], true);
  EXPECT_FALSE(near->doc["spec"].contains("excludeTopology"));
  provisioner::testing::ExpectGolden("test/manifests/golden/numa-remote.hgx-h100.yaml",
                                     RenderManifests(hm->manifests));
  opt.flavor = "multus";
  auto mm = BuildHostManifests(*r.state, opt);
  ASSERT_TRUE(mm.ok()) << mm.status().message();
  json config = DevicePluginConfig(mm->manifests);
  ASSERT_EQ(config["resourceList"].size(), 2u);
  EXPECT_EQ(config["resourceList"][0]["resourceName"], "far");
  EXPECT_EQ(config["resourceList"][0]["excludeTopology"], true);
  EXPECT_FALSE(config["resourceList"][1].contains("excludeTopology"));
  provisioner::testing::ExpectGolden("test/manifests/golden/numa-remote.hgx-h100.multus.yaml",
                                     RenderManifests(mm->manifests));
}

// Two nics that discovery resolves to one PF: named both, exit 1.
TEST(ManifestsDiscoveryTest, OverlappingNicsAfterDiscoveryAreAnError) {
  ExampleOnTree t("roce-sriov", "cx5-roce", "cx5-roce-3");
  ASSERT_TRUE(t.loaded);
  DesiredState d = t.desired;
  NicSpec second = d.nics[0];
  second.name = "by-name";
  second.selector = NicSelector();
  second.selector.pf_names = {"ens6f0np0"};  // the netdev of rootDevices 0000:af:00.0
  second.num_vfs.reset();
  d.nics.push_back(second);
  auto ms = BuildManifests(d, t.opt);
  ASSERT_FALSE(ms.ok());
  EXPECT_NE(ms.status().message().find(
                "spec.nics[1].nicSelector: selects 0000:af:00.0, which spec.nics[0] "
                "(roce-sriov-nic) also selects"),
            std::string::npos)
      << ms.status().message();
}

// The NodeFeature node-feature-discovery picks up: NFD's namespace, the
// nfd.node.kubernetes.io/node-name label, a name of its own (nfd-worker's
// object is named after the node), and labels that nfd-master's validate.Label
// accepts without -extra-label-ns: valid keys and values, under a
// sub-namespace of feature.node.kubernetes.io (kubernetes.io is denied).
void ExpectNfdReadable(const Manifest& m, const std::string& node) {
  EXPECT_EQ(m.doc["apiVersion"], "nfd.k8s-sigs.io/v1alpha1");
  EXPECT_EQ(m.Namespace(), "node-feature-discovery");
  EXPECT_EQ(m.doc["metadata"]["labels"]["nfd.node.kubernetes.io/node-name"], node);
  EXPECT_NE(m.name, node);
  ASSERT_TRUE(m.doc["spec"]["labels"].is_object());
  EXPECT_FALSE(m.doc["spec"]["labels"].empty());
  const std::string suffix = ".feature.node.kubernetes.io";
  for (const auto& [key, value] : m.doc["spec"]["labels"].items()) {
    EXPECT_TRUE(config::IsLabelKey(key)) << key;
    ASSERT_TRUE(value.is_string()) << key;
    EXPECT_TRUE(config::IsLabelValue(value.get<std::string>())) << key << "=" << value;
    const std::string ns = key.substr(0, key.find('/'));
    EXPECT_TRUE(ns.size() > suffix.size() &&
                ns.compare(ns.size() - suffix.size(), suffix.size(), suffix) == 0)
        << key;
  }
}

// The 8 rails on the HGX tree: the rail count, the link type and firmware of
// the rail cards, the netns mode, as discovery read them; the operator's
// label (the rails have VFs).
TEST(ManifestsDiscoveryTest, NodeFeatureFromTheFacts) {
  ExampleOnTree t("rails", "hgx-h100", "nf-hgx");
  const std::vector<Manifest> ms = t.Manifests();
  const Manifest* nf = Find(ms, "NodeFeature", "provisioner-" + t.desired.name);
  ASSERT_NE(nf, nullptr);
  ExpectNfdReadable(*nf, t.desired.name);
  const json& labels = nf->doc["spec"]["labels"];
  const std::string p = "provisioner.feature.node.kubernetes.io/";
  EXPECT_EQ(labels.value(p + "rails", ""), "8") << labels.dump();
  // The guide's hand-written 8-rail layout is the same 8 rails.
  LoadResult written = LoadDesiredStateFromFile("examples/rails-8gpu.yaml");
  ASSERT_TRUE(written.state);
  auto wm = BuildManifests(*written.state, t.opt);
  ASSERT_TRUE(wm.ok()) << wm.status().message();
  const Manifest* wnf = Find(*wm, "NodeFeature", "provisioner-" + written.state->name);
  ASSERT_NE(wnf, nullptr);
  EXPECT_EQ(wnf->doc["spec"]["labels"].value(p + "rails", ""), "8");
  ASSERT_TRUE(t.facts.rdma_netns_mode.has_value());
  EXPECT_EQ(labels.value(p + "rdma-netns-mode", ""), *t.facts.rdma_netns_mode);
  EXPECT_EQ(labels.value(p + "sriov-config-daemon", ""), "true") << labels.dump();
  // The same host without VFs: the operator is not used, no such label.
  DesiredState no_vfs = t.desired;
  for (NicSpec& nic : no_vfs.nics) nic.num_vfs.reset();
  auto ms2 = BuildManifests(no_vfs, t.opt);
  ASSERT_TRUE(ms2.ok()) << ms2.status().message();
  const Manifest* nf2 = Find(*ms2, "NodeFeature", "provisioner-" + t.desired.name);
  ASSERT_NE(nf2, nullptr);
  EXPECT_FALSE(nf2->doc["spec"]["labels"].contains(p + "sriov-config-daemon"));
  // The firmware label is the rail cards' one version, as the RDMA devices say.
  std::set<std::string> fw;
  for (const NicSpec& nic : t.desired.nics) {
    for (const PciFunction* pf : SelectPfs(nic, t.facts)) {
      for (const RdmaDevice& dev : t.facts.rdma.devices) {
        if (dev.pci_address == pf->pci_address && !dev.fw_ver.empty()) fw.insert(dev.fw_ver);
      }
    }
  }
  if (fw.size() == 1) {
    EXPECT_EQ(labels.value(p + "fw-version", ""), *fw.begin());
  } else {
    EXPECT_EQ(labels.contains(p + "fw-version"), !fw.empty()) << labels.dump();
  }
}

// Where the sriov-network-operator is used (a nic with VFs), the label a
// configDaemonNodeSelector can name; the link type from the PF's port.
TEST(ManifestsDiscoveryTest, NodeFeatureNamesTheConfigDaemonWhereTheOperatorIsUsed) {
  ExampleOnTree t("roce-sriov", "cx5-roce", "nf-cx5");
  const std::vector<Manifest> ms = t.Manifests();
  const Manifest* nf = Find(ms, "NodeFeature", "provisioner-worker1");
  ASSERT_NE(nf, nullptr);
  ExpectNfdReadable(*nf, "worker1");
  const json& labels = nf->doc["spec"]["labels"];
  EXPECT_EQ(labels.value("provisioner.feature.node.kubernetes.io/sriov-config-daemon", ""), "true");
  EXPECT_EQ(labels.value("provisioner.feature.node.kubernetes.io/link-type", ""), "ethernet");
  EXPECT_FALSE(labels.contains("provisioner.feature.node.kubernetes.io/rails"));
}

// doctor's verdict over the facts, as the CLI passes it: the worst verdict
// and the number of FAILs; not run, no label.
TEST(ManifestsDiscoveryTest, NodeFeatureCarriesDoctorsVerdict) {
  ExampleOnTree t("roce-sriov", "cx5-roce", "nf-cx5-doctor");
  ASSERT_TRUE(t.loaded);
  const std::string p = "provisioner.feature.node.kubernetes.io/";
  auto labels_for = [&](std::optional<DoctorSummary> doctor) {
    ManifestOptions opt = t.opt;
    opt.doctor = doctor;
    auto ms = BuildManifests(t.desired, opt);
    EXPECT_TRUE(ms.ok()) << ms.status().message();
    const Manifest* nf = ms.ok() ? Find(*ms, "NodeFeature", "provisioner-worker1") : nullptr;
    return nf == nullptr ? json::object() : nf->doc["spec"]["labels"];
  };
  json failed = labels_for(DoctorSummary{12, 2, 1});
  EXPECT_EQ(failed.value(p + "doctor", ""), "fail");
  EXPECT_EQ(failed.value(p + "doctor-failed", ""), "2");
  json warned = labels_for(DoctorSummary{12, 0, 1});
  EXPECT_EQ(warned.value(p + "doctor", ""), "warn");
  EXPECT_EQ(warned.value(p + "doctor-failed", ""), "0");
  EXPECT_EQ(labels_for(DoctorSummary{12, 0, 0}).value(p + "doctor", ""), "ok");
  EXPECT_FALSE(labels_for(std::nullopt).contains(p + "doctor"));
}

// Without discovered facts there is nothing to say: no NodeFeature, no error.
TEST(ManifestsDiscoveryTest, NoNodeFeatureWithoutFacts) {
  LoadResult r = LoadDesiredStateFromFile("examples/roce-sriov.yaml");
  ASSERT_TRUE(r.state);
  auto ms = BuildManifests(*r.state, ManifestOptions());
  ASSERT_TRUE(ms.ok()) << ms.status().message();
  for (const auto& m : *ms) EXPECT_NE(m.kind, "NodeFeature");
}

// A fact no label value can carry (a firmware string with a space) is left
// out with a warning naming the label; a node name longer than a label value
// may be is an error naming metadata.name.
TEST(ManifestsDiscoveryTest, NodeFeatureLabelValuesFollowTheKubernetesRules) {
  ExampleOnTree t("roce-sriov", "cx5-roce", "nf-cx5-bad");
  ASSERT_TRUE(t.loaded);
  for (RdmaDevice& dev : t.facts.rdma.devices) dev.fw_ver = "16.35.2000 (MT_0000000008)";
  auto hm = BuildHostManifests(t.desired, t.opt);
  ASSERT_TRUE(hm.ok()) << hm.status().message();
  const Manifest* nf = Find(hm->manifests, "NodeFeature", "provisioner-worker1");
  ASSERT_NE(nf, nullptr);
  ExpectNfdReadable(*nf, "worker1");
  EXPECT_FALSE(
      nf->doc["spec"]["labels"].contains("provisioner.feature.node.kubernetes.io/fw-version"));
  bool warned = false;
  for (const auto& w : hm->warnings) {
    warned = warned || (w.find("provisioner.feature.node.kubernetes.io/fw-version left out") !=
                            std::string::npos &&
                        w.find("not a valid Kubernetes label value") != std::string::npos);
  }
  EXPECT_TRUE(warned);

  DesiredState d = t.desired;
  d.name = std::string(64, 'n');  // a DNS subdomain, not a label value
  auto bad = BuildHostManifests(d, t.opt);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("metadata.name \"" + d.name + "\""), std::string::npos)
      << bad.status().message();
  EXPECT_NE(bad.status().message().find("at most 63 characters"), std::string::npos);
}

// The strict check knows NFD's schema: a NodeFeature with a field the CRD
// does not have, or a label value that is not a string, fails it.
TEST(ManifestsDiscoveryTest, NfdCrdIsStrict) {
  provisioner::testing::CrdChecker c;
  std::string error;
  ASSERT_TRUE(c.AddCrdFile("test/manifests/crds/nfd.k8s-sigs.io_nfd-api-crds.yaml", &error))
      << error;
  json good = {{"apiVersion", "nfd.k8s-sigs.io/v1alpha1"},
               {"kind", "NodeFeature"},
               {"metadata", {{"name", "provisioner-n1"}, {"namespace", "node-feature-discovery"}}},
               {"spec", {{"labels", {{"provisioner.feature.node.kubernetes.io/rails", "8"}}}}}};
  EXPECT_TRUE(c.Check(good).empty());
  json unknown = good;
  unknown["spec"]["taints"] = json::array();
  EXPECT_FALSE(c.Check(unknown).empty());
  json number = good;
  number["spec"]["labels"]["provisioner.feature.node.kubernetes.io/rails"] = 8;
  EXPECT_FALSE(c.Check(number).empty());
  json no_spec = good;
  no_spec.erase("spec");
  EXPECT_FALSE(c.Check(no_spec).empty());
  // The file's other CRDs were loaded too (one file, three documents).
  json rule = {{"apiVersion", "nfd.k8s-sigs.io/v1alpha1"},
               {"kind", "NodeFeatureRule"},
               {"metadata", {{"name", "r"}}},
               {"spec", {{"rules", json::array()}}}};
  for (const auto& e : c.Check(rule)) EXPECT_EQ(e.find("no CRD loaded"), std::string::npos) << e;
}

// The label checks themselves, on the apimachinery rules' edges.
TEST(ManifestsDiscoveryTest, LabelValueRules) {
  EXPECT_TRUE(config::IsLabelValue(""));
  EXPECT_TRUE(config::IsLabelValue("16.35.2000"));
  EXPECT_TRUE(config::IsLabelValue(std::string(63, 'a')));
  EXPECT_FALSE(config::IsLabelValue(std::string(64, 'a')));
  EXPECT_FALSE(config::IsLabelValue("-a"));
  EXPECT_FALSE(config::IsLabelValue("a."));
  EXPECT_FALSE(config::IsLabelValue("a b"));
  EXPECT_FALSE(config::IsLabelValue("a/b"));
}

}  // namespace
}  // namespace provisioner::manifests

namespace provisioner::manifests {
namespace {

// Issue 28 item 3 with vfVlan (sriov-cni sets a network's vlan on each VF a
// pod attaches): the sriov config of a resource whose VFs get a port VLAN
// carries it; a multusConfigs vlan that differs, VFs of one resource with
// different VLANs (two nics sharing a resourceName), and a Spiderpool config
// whose vlanID would reset the VLAN's qos are errors; each group's policy
// says its own vfMtu.
TEST(ManifestsDiscoveryTest, VfGroupVlanAndMtuReachTheClusterObjects) {
  auto load = [](const std::string& nics, const std::string& multus) {
    LoadResult r = LoadDesiredStateFromString(R"(apiVersion: provisioner/v1alpha1
kind: HostConfig
metadata:
  name: worker1
spec:
  nics:
)" + nics + R"(  multusConfigs:
)" + multus,
                                              "host.yaml");
    EXPECT_TRUE(r.state) << (r.diagnostics.empty() ? "" : r.diagnostics.front().message);
    return r;
  };
  const std::string split = R"(    - name: split
      nicSelector: { pfNames: ["ens6f0np0"] }
      numVfs: 8
      mtu: 9000
      vfVlan: { id: 7 }
      vfGroups:
        - { range: "0-3", resourceName: a, vfMtu: 9000, vfVlan: { id: 100, qos: 2 } }
        - { range: "4-7", resourceName: b }
)";
  ManifestOptions opt;
  opt.flavor = "multus";
  LoadResult r = load(split,
                      "    - { name: na, cniType: sriov, nic: split, resourceName: a }\n"
                      "    - { name: nb, cniType: sriov, nic: split, resourceName: b }\n");
  ASSERT_TRUE(r.state);
  auto mm = BuildHostManifests(*r.state, opt);
  ASSERT_TRUE(mm.ok()) << mm.status().message();
  const Manifest* pa = Find(mm->manifests, "SriovNetworkNodePolicy", "split-vf0-3-worker1");
  const Manifest* pb = Find(mm->manifests, "SriovNetworkNodePolicy", "split-vf4-7-worker1");
  ASSERT_NE(pa, nullptr);
  ASSERT_NE(pb, nullptr);
  EXPECT_EQ(pa->doc["spec"]["mtu"], 9000);
  EXPECT_FALSE(pb->doc["spec"].contains("mtu"));  // neither the group nor the nic sets vfMtu
  auto sriov = [&](const std::string& name) {
    const Manifest* nad = Find(mm->manifests, "NetworkAttachmentDefinition", name);
    EXPECT_NE(nad, nullptr) << name;
    json conf = nad ? json::parse(nad->doc["spec"]["config"].get<std::string>()) : json();
    if (conf.contains("plugins")) return conf["plugins"][0];
    return conf;
  };
  EXPECT_EQ(sriov("na")["vlan"], 100);
  EXPECT_EQ(sriov("na")["vlanQoS"], 2);
  EXPECT_EQ(sriov("na")["vlanProto"], "802.1Q");
  EXPECT_EQ(sriov("nb")["vlan"], 7);  // inherited from the nic
  EXPECT_EQ(sriov("nb")["vlanQoS"], 0);

  // Spiderpool: vlanID 7 for b; none for a (qos 2 would be reset to 0).
  opt.flavor = "spiderpool";
  auto sp = BuildManifests(*r.state, opt);
  ASSERT_TRUE(sp.ok()) << sp.status().message();
  EXPECT_EQ(Find(*sp, "SpiderMultusConfig", "nb")->doc["spec"]["sriov"]["vlanID"], 7);
  EXPECT_FALSE(Find(*sp, "SpiderMultusConfig", "na")->doc["spec"]["sriov"].contains("vlanID"));

  // The config's own vlan: the same id is fine, another is an error.
  r = load(split, "    - { name: nb, cniType: sriov, nic: split, resourceName: b, vlan: 7 }\n");
  opt.flavor = "multus";
  EXPECT_TRUE(BuildHostManifests(*r.state, opt).ok());
  r = load(split, "    - { name: nb, cniType: sriov, nic: split, resourceName: b, vlan: 8 }\n");
  auto bad = BuildHostManifests(*r.state, opt);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "multusConfigs nb (resource b): vlan 8 is not the port VLAN apply gives its VFs "
            "(spec.nics[0].vfVlan (spec.nics[0].vfGroups[1]) id 7): sriov-cni would set the "
            "config's on every VF a pod attaches");
  r = load(split, "    - { name: na, cniType: sriov, nic: split, resourceName: a, vlan: 100 }\n");
  opt.flavor = "spiderpool";
  auto bad_sp = BuildManifests(*r.state, opt);
  ASSERT_FALSE(bad_sp.ok());
  EXPECT_NE(bad_sp.status().message().find("Spiderpool's sriov config carries a vlanID only"),
            std::string::npos)
      << bad_sp.status().message();

  // vfVlan 4095 (the kernel takes it, sriov-cni and Spiderpool's CRD stop at
  // 4094): not restated, in neither flavor.
  // A nic `name` on the PF `pf` with 2 VFs, resource `resource`, VLAN `vlan`.
  auto vlan_nic = [](const std::string& name, const std::string& pf, const std::string& resource,
                     int vlan) {
    return "    - name: " + name + "\n      nicSelector: { pfNames: [\"" + pf +
           "\"] }\n      numVfs: 2\n      resourceName: " + resource +
           "\n      vfVlan: { id: " + std::to_string(vlan) + " }\n";
  };
  r = load(vlan_nic("top", "ens6f0np0", "t", 4095),
           "    - { name: nt, cniType: sriov, nic: top }\n");
  opt.flavor = "multus";
  mm = BuildHostManifests(*r.state, opt);
  ASSERT_TRUE(mm.ok()) << mm.status().message();
  EXPECT_FALSE(sriov("nt").contains("vlan")) << sriov("nt").dump();
  EXPECT_FALSE(sriov("nt").contains("vlanQoS"));
  opt.flavor = "spiderpool";
  sp = BuildManifests(*r.state, opt);
  ASSERT_TRUE(sp.ok()) << sp.status().message();
  EXPECT_FALSE(Find(*sp, "SpiderMultusConfig", "nt")->doc["spec"]["sriov"].contains("vlanID"));

  // Two nics share resource b, their VFs with different VLANs.
  r = load(split + vlan_nic("other", "ens6f1np1", "b", 9),
           "    - { name: nb, cniType: sriov, nic: split, resourceName: b }\n");
  opt.flavor = "multus";
  bad = BuildHostManifests(*r.state, opt);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "resource b: its VFs get different port VLANs (spec.nics[0].vfVlan "
            "(spec.nics[0].vfGroups[1]): vlan 7 qos 0 proto 802.1Q; spec.nics[1].vfVlan: vlan 9 "
            "qos 0 proto 802.1Q): a pod gets any VF of the resource, and sriov-cni sets one VLAN "
            "for all of them; give each VLAN its own resourceName");
}

}  // namespace
}  // namespace provisioner::manifests
