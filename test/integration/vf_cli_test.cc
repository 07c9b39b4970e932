// End-to-end: VF settings and driver binding with the real binary against
// host trees and the kernel_sim daemon (issue 4 "Done when": numVfs 8, mtu
// 9000, deviceType vfio-pci on the RoCE host, in apply order, idempotent).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;

const std::string kPf0 = "/sys/bus/pci/devices/0000:af:00.0";
const std::string kIbPf = "/sys/bus/pci/devices/0000:86:00.0";

std::string LinkBase(const std::string& path) {
  char buf[4096];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  if (n < 0) return "";
  std::string t(buf, static_cast<size_t>(n));
  return t.substr(t.rfind('/') + 1);
}

// Where a change belongs in the cross-module apply order (issue 4, item 5):
// firmware, kmod, netns mode, numVfs, VF settings, VF binding, links.
int Rank(const json& c) {
  const std::string module = c.value("module", "");
  const std::string attribute = c.value("attribute", "");
  if (module == "firmware") return 0;
  if (module == "kmod" || module == "kernelModules") return 1;
  if (module == "rdma") return 2;
  if (module == "sriov") return 3;
  if (module == "vf") return attribute == "driver" ? 5 : 4;
  if (module == "sriov-operator") return 4;  // the operator's IB GUID pool: with the VF settings
  if (module == "link") return 6;
  ADD_FAILURE() << "change of an unexpected module: " << c.dump();
  return -1;
}

void ExpectApplyOrder(const json& changes) {
  int last = -1;
  for (const json& c : changes) {
    int rank = Rank(c);
    EXPECT_GE(rank, last) << c.value("id", "") << " comes after a change of a later phase:\n"
                          << changes.dump(2);
    last = std::max(last, rank);
  }
}

bool Has(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// The change `id` of `plan` (a test failure and null when it is not there),
// the plan in apply order.
json PlannedChange(const json& plan, const std::string& id) {
  ExpectApplyOrder(plan["changes"]);
  for (const json& c : plan["changes"]) {
    if (c["id"] == id) return c;
  }
  ADD_FAILURE() << id << " not planned:\n" << plan.dump(2);
  return json();
}

// discover's sriov.vfs of the PF `pci` (a test failure and null when it
// lists no such PF).
json DiscoveredVfs(const std::string& root, const std::string& pci) {
  const json facts = DiscoverJson(root);
  for (const json& nic : facts["nics"]) {
    if (nic["pciAddress"] == pci) return nic["sriov"]["vfs"];
  }
  ADD_FAILURE() << pci << " not discovered:\n" << facts.dump(2);
  return json();
}

// host.yaml of cx5-roce's first PF with 2 VFs and the VF setting `field`.
std::string TwoVfsWith(const std::string& field, const std::string& value) {
  return WriteTempFile("host.yaml",
                       HostYaml("  nics:\n" + PfNic("roce", "0000:af:00.0", 2,
                                                    "      " + field + ": " + value + "\n")));
}

std::string Snapshot(const std::string& root) {
  std::string file = MakeTempDir("snap") + "/tree.ttar";
  EXPECT_TRUE(WriteTtar(root, file).ok());
  return ReadFile(file);
}

TEST(VfCliTest, RoceVfsOnVfioPciInOrderThenNoChange) {
  std::string root = ExtractHost("cx5-roce");
  // vfio-pci registered, as once the vfio_pci module is loaded.
  KernelSimDaemon sim(root, 100, {"--driver", "vfio-pci"});
  ASSERT_TRUE(sim.ready());
  std::string yaml = WriteTempFile("host.yaml", HostYaml(R"(  rdma:
    netnsMode: exclusive
  kernelModules:
    - mlx5_ib
    - rdma_ucm
  nics:
    - name: pf0
      nicSelector: { rootDevices: ["0000:af:00.0"] }
      linkType: eth
      numVfs: 8
      mtu: 9000
      deviceType: vfio-pci
      vfTrust: true
      vfSpoofChk: false
)"));
  json plan = PlanJson(yaml, root);
  std::vector<std::string> ids = Ids(plan["changes"]);
  ASSERT_TRUE(Has(ids, "sriov/0000:af:00.0/numVfs")) << plan.dump(2);
  ASSERT_TRUE(Has(ids, "vf/0000:af:00.0/driver")) << plan.dump(2);
  ASSERT_TRUE(Has(ids, "vf/0000:af:00.0/trust")) << plan.dump(2);
  ASSERT_TRUE(Has(ids, "vf/0000:af:00.0/spoofChk")) << plan.dump(2);
  ExpectApplyOrder(plan["changes"]);
  for (const json& w : plan["warnings"]) {
    EXPECT_EQ(w.get<std::string>().find("vfio"), std::string::npos) << w;  // vfio-pci is loaded
  }
  bool link_module = false;
  for (const json& c : plan["changes"]) link_module = link_module || c["module"] == "link";
  ASSERT_TRUE(link_module) << plan.dump(2);  // the PF mtu change
  std::set<std::string> modules;
  for (const json& c : plan["changes"]) modules.insert(c["module"].get<std::string>());
  for (const char* m : {"kmod", "rdma", "sriov", "vf", "link"}) {
    EXPECT_EQ(modules.count(m), 1u) << m << "\n" << plan.dump(2);
  }

  const json applied = ApplyJson(yaml, root);
  EXPECT_EQ(Ids(applied["changes"]), ids);  // applied in the plan's order
  for (const json& c : applied["changes"]) EXPECT_EQ(c["status"], "applied") << c.dump();
  EXPECT_EQ(sim.Refused(), "");

  // Every VF ends on vfio-pci, with driver_override set and its vfio group node.
  for (int i = 0; i < 8; ++i) {
    const std::string vf = root + kPf0 + "/virtfn" + std::to_string(i);
    EXPECT_EQ(LinkBase(vf + "/driver"), "vfio-pci") << i;
    EXPECT_EQ(ReadFile(vf + "/driver_override"), "vfio-pci\n") << i;
    EXPECT_TRUE(Exists(root + "/dev/vfio/" + LinkBase(vf + "/iommu_group"))) << i;
    EXPECT_FALSE(Exists(vf + "/net")) << i;
    const std::string state = root + "/run/provisioner/vf/0000:af:00.0/" + std::to_string(i);
    EXPECT_EQ(ReadFile(state + "/trust"), "1\n") << i;
    EXPECT_EQ(ReadFile(state + "/spoofchk"), "0\n") << i;
  }
  EXPECT_FALSE(Exists(root + kPf0 + "/virtfn8"));
  if (link_module) {
    EXPECT_EQ(ReadFile(root + "/sys/class/net/ens6f0np0/mtu"), "9000\n");
  }

  ExpectConverged(yaml, root);
  // A second apply makes no write.
  std::string before = Snapshot(root);
  RunResult a2 = Provisioner({"apply", yaml, "--root", root, "-o", "json"});
  EXPECT_EQ(a2.exit_code, 0) << a2.err;
  EXPECT_EQ(ParseJson(a2)["changes"].size(), 0u);
  EXPECT_TRUE(before == Snapshot(root)) << "second apply changed the tree";

  // netdevice: back to mlx5_core, with netdevs.
  std::string netdevice = WriteTempFile(
      "netdevice.yaml", ReadFile(yaml).replace(ReadFile(yaml).find("vfio-pci"), 8, "netdevice"));
  const json back = ApplyJson(netdevice, root);
  EXPECT_EQ(Ids(back["changes"]), std::vector<std::string>{"vf/0000:af:00.0/driver"});
  for (int i = 0; i < 8; ++i) {
    const std::string vf = root + kPf0 + "/virtfn" + std::to_string(i);
    EXPECT_EQ(LinkBase(vf + "/driver"), "mlx5_core") << i;
    EXPECT_EQ(ReadFile(vf + "/driver_override"), "(null)\n") << i;
    EXPECT_TRUE(Exists(vf + "/net")) << i;
  }
  EXPECT_FALSE(Exists(root + "/dev/vfio"));
  EXPECT_EQ(sim.Refused(), "");
}

TEST(VfCliTest, VfioWithoutTheDriverFailsClearlyAndRollsBack) {
  std::string root = ExtractHost("cx5-roce");
  KernelSimDaemon sim(root);  // vfio_pci not loaded
  ASSERT_TRUE(sim.ready());
  std::string yaml = WriteTempFile("host.yaml", Pf0Yaml(2, R"(      deviceType: vfio-pci
)"));
  json plan = PlanJson(yaml, root);
  ASSERT_EQ(plan["warnings"].size(), 1u) << plan.dump(2);
  EXPECT_NE(plan["warnings"][0].get<std::string>().find("spec.nics[0].deviceType"),
            std::string::npos);
  EXPECT_NE(plan["warnings"][0].get<std::string>().find("vfio_pci"), std::string::npos);
  RunResult a = Provisioner({"apply", yaml, "--root", root, "--settle-timeout", "20"});
  EXPECT_EQ(a.exit_code, 1) << a.out << a.err;
  EXPECT_NE(a.err.find("driver vfio-pci is not registered (no /sys/bus/pci/drivers/vfio-pci)"),
            std::string::npos)
      << a.err;
  EXPECT_EQ(ReadFile(root + kPf0 + "/sriov_numvfs"), "0\n");  // rolled back
}

TEST(VfCliTest, IbSriovVfGuidsAndTrust) {
  std::string root = ExtractHost("cx5-ib");
  KernelSimDaemon sim(root);
  ASSERT_TRUE(sim.ready());
  std::string yaml = WriteTempFile("host.yaml", HostYaml(R"(  nics:
    - name: ib-nic
      nicSelector: { rootDevices: ["0000:86:00.0"] }
      numVfs: 4
      vfTrust: true
      vfSpoofChk: false
      resourceName: mellanoxibsriov
  multusConfigs:
    - name: ib-sriov
      cniType: ib-sriov
      nic: ib-nic
      pkey: "0x1000"
)"));
  json plan = PlanJson(yaml, root);
  std::vector<std::string> ids = Ids(plan["changes"]);
  ASSERT_TRUE(Has(ids, "vf/0000:86:00.0/ibGuids")) << plan.dump(2);
  ASSERT_TRUE(Has(ids, "vf/0000:86:00.0/trust"));
  ASSERT_TRUE(Has(ids, "vf/0000:86:00.0/spoofChk"));
  ASSERT_TRUE(Has(ids, "sriov-operator/0000:86:00.0/ibGuidPool"));
  ExpectApplyOrder(plan["changes"]);
  for (const json& c : plan["changes"]) {
    if (c["id"] == "vf/0000:86:00.0/ibGuids") {
      EXPECT_EQ(c["after"], (json{"ee0d:9a00:018a:bcde", "ee0d:9a00:028a:bcde",
                                  "ee0d:9a00:038a:bcde", "ee0d:9a00:048a:bcde"}));
    }
  }
  ApplyJson(yaml, root);
  EXPECT_EQ(sim.Refused(), "");
  for (int i = 0; i < 4; ++i) {
    const std::string vf = root + kIbPf + "/virtfn" + std::to_string(i);
    char want[24];
    snprintf(want, sizeof want, "ee0d:9a00:%02x8a:bcde", static_cast<unsigned>(i + 1));
    std::string ib;
    for (const char* d : {"mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4"}) {
      if (Exists(vf + "/infiniband/" + d)) ib = d;
    }
    ASSERT_FALSE(ib.empty()) << i;
    EXPECT_EQ(ReadFile(vf + "/infiniband/" + ib + "/node_guid"), std::string(want) + "\n") << i;
    EXPECT_EQ(ReadFile(vf + "/infiniband/" + ib + "/ports/1/gids/0"),
              "fe80:0000:0000:0000:" + std::string(want) + "\n")
        << i;
    EXPECT_EQ(LinkBase(vf + "/driver"), "mlx5_core") << i;
    const std::string state = root + "/run/provisioner/vf/0000:86:00.0/" + std::to_string(i);
    EXPECT_EQ(ReadFile(state + "/trust"), "1\n");
    EXPECT_EQ(ReadFile(state + "/spoofchk"), "0\n");
  }
  // The sriov-network-operator's pool holds the same GUIDs (its config daemon
  // sets VF GUIDs even for externallyManaged policies).
  json pool = json::parse(ReadFile(root + "/etc/sriov-operator/infiniband/guids"));
  EXPECT_EQ(pool, json::parse(R"([{"pciAddress": "0000:86:00.0", "guids": [
      "ee:0d:9a:00:01:8a:bc:de", "ee:0d:9a:00:02:8a:bc:de",
      "ee:0d:9a:00:03:8a:bc:de", "ee:0d:9a:00:04:8a:bc:de"]}])"));
  ExpectConverged(yaml, root);

  // discover shows what the vf module reads.
  const json vfs = DiscoveredVfs(root, "0000:86:00.0");
  ASSERT_EQ(vfs.size(), 4u);
  EXPECT_EQ(vfs[1]["nodeGuid"], "ee0d:9a00:028a:bcde");
  EXPECT_EQ(vfs[1]["portGuid"], "ee0d:9a00:028a:bcde");
  EXPECT_EQ(vfs[1]["trust"], true);
  EXPECT_EQ(vfs[1]["spoofChk"], false);
}

// Issue 28 item 2, vfVlan: plan, apply on the RoCE tree with the kernel_sim
// daemon, the capture files, an empty next plan, discover's sriov.vfs[].vlan,
// and a VLAN removal (id 0) planned from what was read back.
TEST(VfCliTest, VfVlanAppliedReadBackAndRemoved) {
  std::string root = ExtractHost("cx5-roce");
  KernelSimDaemon sim(root);
  ASSERT_TRUE(sim.ready());
  std::string yaml = TwoVfsWith("vfVlan", "{ id: 100, qos: 3 }");
  EXPECT_EQ(PlannedChange(PlanJson(yaml, root), "vf/0000:af:00.0/vlan")["after"],
            (json{{"id", 100}, {"qos", 3}, {"proto", "802.1Q"}}));
  ApplyJson(yaml, root);
  EXPECT_EQ(sim.Refused(), "");
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(ReadFile(root + "/run/provisioner/vf/0000:af:00.0/" + std::to_string(i) + "/vlan"),
              "100 3 802.1Q\n")
        << i;
  }
  ExpectConverged(yaml, root);
  const json vfs = DiscoveredVfs(root, "0000:af:00.0");
  ASSERT_EQ(vfs.size(), 2u);
  EXPECT_EQ(vfs[1].value("vlan", json()), (json{{"id", 100}, {"qos", 3}, {"proto", "802.1Q"}}));

  std::string off = TwoVfsWith("vfVlan", "{ id: 0 }");
  json plan2 = PlanJson(off, root);
  ASSERT_EQ(plan2["changes"].size(), 1u) << plan2.dump(2);
  EXPECT_EQ(plan2["changes"][0]["id"], "vf/0000:af:00.0/vlan");
  const json was{{"id", 100}, {"qos", 3}, {"proto", "802.1Q"}};
  EXPECT_EQ(plan2["changes"][0]["before"], (json{was, was}));
  ApplyJson(off, root);
  EXPECT_EQ(ReadFile(root + "/run/provisioner/vf/0000:af:00.0/1/vlan"), "0 0 802.1Q\n");
}

// Issue 28 item 2, vfMac: keep on the RoCE tree with the kernel_sim daemon
// copies each VF netdev's MAC into the PF's table (capture file mac) and
// rebinds, so the VF's RDMA node GUID is the one mlx5 derives from it (not
// zero); the next plan is empty; discover shows sriov.vfs[].mac. Then
// derived: each VF netdev ends with the MAC derived from the PF's
// (0c:42:a1:5b:7c:2e).
TEST(VfCliTest, VfMacKeepThenDerived) {
  std::string root = ExtractHost("cx5-roce");
  KernelSimDaemon sim(root);
  ASSERT_TRUE(sim.ready());
  auto vf_dir = [&](int i) {
    return root + "/sys/bus/pci/devices/0000:af:00." + std::to_string(i + 2);
  };
  auto netdev_mac = [&](int i) {
    std::string out;
    for (const auto& e : std::filesystem::directory_iterator(vf_dir(i) + "/net")) {
      out = ReadFile(e.path().string() + "/address");
    }
    return out;
  };
  std::string yaml = TwoVfsWith("vfMac", "keep");
  EXPECT_EQ(PlannedChange(PlanJson(yaml, root), "vf/0000:af:00.0/mac")["after"], "keep");
  ApplyJson(yaml, root);
  EXPECT_EQ(sim.Refused(), "");
  std::vector<std::string> kept;
  for (int i = 0; i < 2; ++i) {
    const std::string mac = netdev_mac(i);
    ASSERT_EQ(mac.size(), 18u) << i << " " << mac;  // with its newline
    kept.push_back(mac.substr(0, 17));
    EXPECT_EQ(ReadFile(root + "/run/provisioner/vf/0000:af:00.0/" + std::to_string(i) + "/mac"),
              mac);
    std::string guid;
    for (const auto& e : std::filesystem::directory_iterator(vf_dir(i) + "/infiniband")) {
      guid = ReadFile(e.path().string() + "/node_guid");
    }
    const std::string& m = kept.back();
    EXPECT_EQ(guid, m.substr(0, 2) + m.substr(3, 2) + ":" + m.substr(6, 2) + "ff:fe" +
                        m.substr(9, 2) + ":" + m.substr(12, 2) + m.substr(15, 2) + "\n");
  }
  ExpectConverged(yaml, root);
  const json vfs = DiscoveredVfs(root, "0000:af:00.0");
  ASSERT_EQ(vfs.size(), 2u);
  EXPECT_EQ(vfs[1].value("mac", json()), kept[1]);

  std::string derived = TwoVfsWith("vfMac", "derived");
  json plan2 = PlanJson(derived, root);
  ASSERT_EQ(plan2["changes"].size(), 1u) << plan2.dump(2);
  EXPECT_EQ(plan2["changes"][0]["before"], (json{kept[0], kept[1]}));
  EXPECT_EQ(plan2["changes"][0]["after"]["macs"], (json{"0a:1d:87:23:60:8d", "96:be:3e:76:a4:4b"}));
  ApplyJson(derived, root);
  EXPECT_EQ(netdev_mac(0), "0a:1d:87:23:60:8d\n");
  EXPECT_EQ(netdev_mac(1), "96:be:3e:76:a4:4b\n");
  ExpectConverged(derived, root);
}

// Issue 28 item 3 "Done when": vfGroups 0-3 netdevice and 4-7 vfio-pci on
// the RoCE host with the kernel_sim daemon: after apply each range is on its
// driver, the next plan is empty, and `manifests` writes two policies whose
// pfNames end in #0-3 and #4-7.
TEST(VfCliTest, VfGroupsBindEachRangeAndMakeAPolicyPerGroup) {
  std::string root = ExtractHost("cx5-roce");
  KernelSimDaemon sim(root, 100, {"--driver", "vfio-pci"});
  ASSERT_TRUE(sim.ready());
  std::string yaml = WriteTempFile("groups.yaml", HostYaml(R"(  nics:
    - name: split
      nicSelector: { pfNames: ["ens6f0np0"] }
      numVfs: 8
      vfGroups:
        - { range: "0-3", deviceType: netdevice, isRdma: true, resourceName: podvfs }
        - { range: "4-7", deviceType: vfio-pci, resourceName: vmvfs }
)"));
  const json a = ApplyJson(yaml, root);
  // The netdevice group's VF netdevs are brought up although the nic sets
  // no deviceType (before: only a nic-level netdevice did).
  EXPECT_EQ(Ids(a["changes"]),
            (std::vector<std::string>{"sriov/0000:af:00.0/numVfs", "vf/0000:af:00.0/driver",
                                      "link/0000:af:00.0/vfsUp#0-3"}));
  EXPECT_EQ(sim.Refused(), "");
  for (int i = 0; i < 8; ++i) {
    const std::string vf = root + kPf0 + "/virtfn" + std::to_string(i);
    const bool vfio = i >= 4;
    EXPECT_EQ(LinkBase(vf + "/driver"), vfio ? "vfio-pci" : "mlx5_core") << i;
    EXPECT_EQ(ReadFile(vf + "/driver_override"), vfio ? "vfio-pci\n" : "(null)\n") << i;
    EXPECT_EQ(Exists(vf + "/net"), !vfio) << i;
    if (!vfio) {
      EXPECT_EQ(ReadFile(root + "/sys/class/net/ens6f0v" + std::to_string(i) + "/flags"),
                "0x1003\n")
          << i;
    }
  }
  ExpectConverged(yaml, root);

  RunResult m = Provisioner({"manifests", yaml});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.out.find("name: \"split-vf0-3-worker1\""), std::string::npos) << m.out;
  EXPECT_NE(m.out.find("- \"ens6f0np0#0-3\""), std::string::npos) << m.out;
  EXPECT_NE(m.out.find("- \"ens6f0np0#4-7\""), std::string::npos) << m.out;
  EXPECT_NE(m.out.find("resourceName: \"vmvfs\""), std::string::npos) << m.out;
}

// Issue 28 item 3, per-VF settings per group: two netdevice groups of one PF
// with different vfMtu and vfVlan (and a vfRate on one) on the RoCE host
// with the kernel_sim daemon: each group's VFs get its values, the next plan
// is empty, each group's policy says its mtu, and the sriov config of a
// group's resource carries that group's VLAN (sriov-cni would otherwise set
// its own on attach).
TEST(VfCliTest, VfGroupsWithTheirOwnMtuAndVlanConverge) {
  std::string root = ExtractHost("cx5-roce");
  KernelSimDaemon sim(root, 100);
  ASSERT_TRUE(sim.ready());
  std::string yaml = WriteTempFile("groups.yaml", HostYaml(R"(  nics:
    - name: split
      nicSelector: { pfNames: ["ens6f0np0"] }
      numVfs: 6
      mtu: 9000
      vfMtu: 1500
      vfVlan: { id: 300 }
      deviceType: netdevice
      vfGroups:
        - { range: "0-1", resourceName: jumbo, vfMtu: 9000, vfVlan: { id: 100, qos: 3 } }
        - { range: "2-3", resourceName: small, vfMtu: 4000, vfVlan: { id: 200 },
            vfRate: { max: 1000 } }
  multusConfigs:
    - { name: jumbo-net, cniType: sriov, nic: split, resourceName: jumbo }
    - { name: small-net, cniType: sriov, nic: split, resourceName: small }
)"));
  RunResult p = Provisioner({"plan", yaml, "--root", root, "-o", "json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const std::vector<std::string> ids = Ids(ParseJson(p)["changes"]);
  for (const char* id :
       {"vf/0000:af:00.0/vlan#0-1", "vf/0000:af:00.0/vlan#2-3", "vf/0000:af:00.0/vlan#4-5",
        "vf/0000:af:00.0/rate#2-3", "link/0000:af:00.0/vfMtu#0-1", "link/0000:af:00.0/vfMtu#2-3",
        "link/0000:af:00.0/vfMtu#4-5", "link/0000:af:00.0/vfsUp"}) {
    EXPECT_TRUE(Has(ids, id)) << id << " not in the plan:\n" << p.out;
  }
  ExpectApplyOrder(ParseJson(p)["changes"]);
  ApplyJson(yaml, root);
  EXPECT_EQ(sim.Refused(), "");
  const char* vlans[] = {"100 3 802.1Q\n", "100 3 802.1Q\n", "200 0 802.1Q\n",
                         "200 0 802.1Q\n", "300 0 802.1Q\n", "300 0 802.1Q\n"};
  const char* mtus[] = {"9000\n", "9000\n", "4000\n", "4000\n", "1500\n", "1500\n"};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(ReadFile(root + "/run/provisioner/vf/0000:af:00.0/" + std::to_string(i) + "/vlan"),
              vlans[i])
        << i;
    EXPECT_EQ(ReadFile(root + "/sys/class/net/ens6f0v" + std::to_string(i) + "/mtu"), mtus[i]) << i;
  }
  ExpectConverged(yaml, root);

  // One document of `out` by its metadata.name.
  auto doc = [](const std::string& out, const std::string& name) {
    const size_t at = out.find("  name: \"" + name + "\"");
    if (at == std::string::npos) return std::string();
    const size_t start = out.rfind("\n---", at);
    const size_t end = out.find("\n---", at);
    return out.substr(start == std::string::npos ? 0 : start,
                      end == std::string::npos ? std::string::npos : end - start);
  };
  RunResult m = Provisioner({"manifests", yaml, "--flavor", "multus"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(doc(m.out, "split-vf0-1-worker1").find("\n  mtu: 9000\n"), std::string::npos) << m.out;
  EXPECT_NE(doc(m.out, "split-vf2-3-worker1").find("\n  mtu: 4000\n"), std::string::npos) << m.out;
  EXPECT_NE(doc(m.out, "jumbo-net")
                .find(R"(\"type\":\"sriov\",\"vlan\":100,\"vlanProto\":\"802.1Q\",\"vlanQoS\":3)"),
            std::string::npos)
      << doc(m.out, "jumbo-net");
  EXPECT_NE(doc(m.out, "small-net").find(R"(\"vlan\":200,\"vlanProto\":\"802.1Q\",\"vlanQoS\":0)"),
            std::string::npos)
      << doc(m.out, "small-net");
  // Spiderpool: vlanID where the VLAN has qos 0 and 802.1Q; none where it
  // would reset qos 3 (sriov-cni then leaves the VF's VLAN as apply set it).
  RunResult sp = Provisioner({"manifests", yaml, "--flavor", "spiderpool"});
  ASSERT_EQ(sp.exit_code, 0) << sp.err;
  EXPECT_NE(doc(sp.out, "small-net").find("vlanID: 200"), std::string::npos)
      << doc(sp.out, "small-net");
  EXPECT_EQ(doc(sp.out, "jumbo-net").find("vlanID"), std::string::npos) << doc(sp.out, "jumbo-net");
}

}  // namespace
}  // namespace provisioner::testing
