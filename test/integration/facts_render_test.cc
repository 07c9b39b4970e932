// discover's output through the session API: every registered module's
// rendering of its facts (Module::RenderFactsJson / RenderFactsTable).
#include "engine/core/session.h"
#include "engine/output/render.h"
#include "gtest/gtest.h"
#include "test/support/fake_pci_module.h"
#include "yaml-cpp/yaml.h"

namespace provisioner {
namespace {

// The ConnectX-5 PF 0000:af:00.0 (ens6f0np0, mlx5_0), `total` VFs possible
// and `vf` enabled, its VF 0.
PciFunction Cx5Pf(int total, VfInfo vf) {
  PciFunction pf = testing::NetworkPf("0000:af:00.0", "ens6f0np0");
  pf.rdma_devices = {"mlx5_0"};
  vf.pci_address = "0000:af:00.2";
  pf.sriov = SriovInfo{};
  pf.sriov->total_vfs = total;
  pf.sriov->num_vfs = 1;
  pf.sriov->vfs = {vf};
  return pf;
}

// The H100 at 0000:18:00.0.
PciFunction H100() {
  PciFunction gpu;
  gpu.pci_address = "0000:18:00.0";
  gpu.vendor = "10de";
  gpu.device_id = "2330";
  gpu.class_code = 0x030200;
  return gpu;
}

TEST(FactsRenderTest, JsonListsNicsAndGpus) {
  HostFacts h;
  VfInfo vf;
  vf.driver = "mlx5_core";
  vf.netdevs = {"ens6f0v0"};
  vf.rdma_devices = {"mlx5_2"};
  PciFunction pf = Cx5Pf(127, vf);
  pf.driver = "mlx5_core";
  pf.numa_node = 1;
  pf.sriov->offset = 2;
  pf.sriov->stride = 1;
  pf.sriov->vf_device = "1018";
  pf.sriov->drivers_autoprobe = true;
  h.pci.push_back(pf);
  PciFunction eth;  // plain NIC: not listed
  eth.pci_address = "0000:03:00.0";
  eth.class_code = 0x020000;
  h.pci.push_back(eth);
  h.pci.push_back(H100());
  h.pci.back().numa_node = 0;
  auto j = FactsToJson(h);
  ASSERT_EQ(j["nics"].size(), 1u);
  EXPECT_EQ(j["nics"][0]["sriov"]["totalVfs"], 127);
  EXPECT_EQ(j["nics"][0]["sriov"]["vfs"][0]["pciAddress"], "0000:af:00.2");
  EXPECT_EQ(j["nics"][0]["sriov"]["vfs"][0]["rdmaDevices"][0], "mlx5_2");
  EXPECT_EQ(j["nics"][0]["rdmaDevices"][0], "mlx5_0");
  ASSERT_EQ(j["rdmaDevices"].size(), 1u);
  EXPECT_EQ(j["rdmaDevices"][0]["name"], "mlx5_0");
  EXPECT_EQ(j["rdmaDevices"][0]["pciAddress"], "0000:af:00.0");
  ASSERT_EQ(j["gpus"].size(), 1u);
  EXPECT_EQ(j["gpus"][0]["deviceID"], "2330");
  std::string table = RenderFactsTable(h);
  EXPECT_NE(table.find("0000:af:00.0"), std::string::npos);
  EXPECT_NE(table.find("1/127"), std::string::npos);
  EXPECT_EQ(table.find("0000:03:00.0"), std::string::npos);
  YAML::Node y = YAML::Load(JsonToYaml(j));
  EXPECT_EQ(y["nics"][0]["pciAddress"].as<std::string>(), "0000:af:00.0");
  EXPECT_EQ(y["nics"][0]["sriov"]["totalVfs"].as<int>(), 127);
}

// Each module's fields land in the document: a module whose rendering is
// lost fails here (the JSON keys are the contract's).
TEST(FactsRenderTest, EveryModuleRendersItsFacts) {
  HostFacts h;
  h.root = "/tree";
  h.kernel.release = "6.1.0";
  h.rdma_netns_mode = "exclusive";
  VfInfo vf;
  vf.trust = true;
  vf.ib_node_guid = "02:00:00:00:00:00:00:01";
  const PciFunction pf = Cx5Pf(8, vf);
  h.pci.push_back(pf);
  h.pci.push_back(H100());
  h.links["ens6f0np0"] = LinkFacts{"ens6f0np0", 9000, std::nullopt, 9978, true, "up"};
  FirmwareFacts fw;
  fw.source = "mstconfig";
  fw.params["LINK_TYPE_P1"].next_boot = "ETH(2)";
  h.firmware[FirmwareDevice(pf.pci_address)] = fw;
  h.loaded_modules = {"mlx5_core"};
  h.topology.gpus = {{"0000:18:00.0", "10de", "2330", 0}};
  h.topology.links = {{"0000:18:00.0", "0000:af:00.0", PcieLevel::kPix}};
  h.pcie.discovered = true;
  PcieFunctionFacts cfg;
  cfg.config_size = 4096;
  cfg.express_offset = 0x60;
  cfg.port_type = 0;
  cfg.device_control = 0x5830;  // MaxReadReq 4096
  cfg.link_speed = "16.0 GT/s PCIe";
  cfg.link_width = 16;
  h.pcie.functions[pf.pci_address] = cfg;

  const nlohmann::json j = FactsToJson(h);
  EXPECT_EQ(j["formatVersion"], 1);
  EXPECT_EQ(j["root"], "/tree");
  EXPECT_EQ(j["kernel"]["release"], "6.1.0");
  const nlohmann::json& nic = j["nics"][0];
  EXPECT_EQ(nic["class"], "020000");                                     // pci
  EXPECT_EQ(nic["sriov"]["totalVfs"], 8);                                // sriov
  EXPECT_EQ(nic["sriov"]["vfs"][0]["trust"], true);                      // vf
  EXPECT_EQ(nic["sriov"]["vfs"][0]["nodeGuid"], "02:00:00:00:00:00:00:01");
  EXPECT_EQ(nic["links"][0]["mtu"], 9000);                               // link
  EXPECT_EQ(nic["links"][0]["maxMtu"], 9978);
  EXPECT_FALSE(nic["links"][0].contains("minMtu"));
  EXPECT_EQ(nic["firmware"]["parameters"]["LINK_TYPE_P1"]["nextBoot"], "ETH(2)");  // firmware
  EXPECT_EQ(j["kernelModules"]["loaded"][0], "mlx5_core");               // kmod
  EXPECT_FALSE(j["kernelModules"].contains("modprobe"));                 // kmod not discovered
  EXPECT_EQ(j["rdma"]["netnsMode"], "exclusive");                        // rdma
  EXPECT_EQ(j["rdmaDevices"][0]["name"], "mlx5_0");
  EXPECT_EQ(j["gpus"][0]["pciAddress"], "0000:18:00.0");                 // pci
  EXPECT_EQ(j["topology"][0]["level"], "PIX");                           // topology
  EXPECT_EQ(j["pcie"]["functions"]["0000:af:00.0"]["maxReadRequest"], 4096);  // pcie
  EXPECT_EQ(j["pcie"]["functions"]["0000:af:00.0"]["linkWidth"], 16);

  // The table: the host line, then the modules' sections in module order.
  const std::string t = RenderFactsTable(h);
  EXPECT_EQ(t.rfind("Kernel: 6.1.0    RDMA netns mode: exclusive\n\nNICs (", 0), 0u) << t;
  const size_t nics = t.find("NICs ("), gpus = t.find("\nGPUs:\n"),
               topo = t.find("GPU x NIC PCIe topology");
  EXPECT_NE(gpus, std::string::npos) << t;
  EXPECT_NE(topo, std::string::npos) << t;
  EXPECT_LT(nics, gpus);
  EXPECT_LT(gpus, topo);
  EXPECT_NE(t.find("NIC0: 0000:af:00.0 (15b3:1017 ens6f0np0,mlx5_0)"), std::string::npos) << t;
  const size_t pcie = t.find("\nPCIe (config space:");
  EXPECT_LT(topo, pcie);
  EXPECT_NE(t.find("  0000:af:00.0  NIC ens6f0np0  -        4096        16.0 GT/s x16  -\n", pcie),
            std::string::npos)
      << t;
}

}  // namespace
}  // namespace provisioner
