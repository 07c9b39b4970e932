#include "engine/output/facts_output.h"
#include "modules/rdma/rdma_module.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace provisioner::rdma {
namespace {

// The rdma module's part of the discover document.
nlohmann::json Doc(const HostFacts& f) {
  nlohmann::json doc;
  FactsJson out(&doc);
  RdmaModule().RenderFactsJson(f, out);
  return doc;
}
std::string Table(const HostFacts& f) { return RdmaModule().RenderFactsTable(f); }

TEST(RenderRdma, BeforeTheRdmaModuleRanOnlyNamesFromPci) {
  HostFacts f;
  PciFunction pf;
  pf.pci_address = "0000:af:00.0";
  pf.rdma_devices = {"mlx5_0"};
  f.pci = {pf};
  nlohmann::json j = Doc(f)["rdmaDevices"];
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0], nlohmann::json({{"name", "mlx5_0"}, {"pciAddress", "0000:af:00.0"}}));
  EXPECT_EQ(Table(f), "");
  EXPECT_EQ(Doc(f)["rdma"], nlohmann::json({{"netnsMode", nullptr}}));
}

TEST(RenderRdma, DevicesPortsGidsAndAddresses) {
  HostFacts f;
  f.rdma_netns_mode = "exclusive";
  f.rdma.discovered = true;
  f.rdma.persistent_netns_mode = "exclusive";
  f.rdma.persistent_netns_source = "/etc/modprobe.d/ib_core.conf";
  RdmaDevice d;
  d.name = "mlx5_2";
  d.pci_address = "0000:af:00.2";
  d.is_vf = true;
  d.node_guid = "fab8:c803:0073:373e";
  RdmaPort p;
  p.link_layer = "InfiniBand";
  p.state = "ACTIVE";
  p.lid = 0x1a;
  p.sm_lid = 1;
  p.gids = {{0, "fe80:0000:0000:0000:fab8:c803:0073:373e", "IB/RoCE v1", ""}};
  d.ports = {p};
  RdmaDevice e;
  e.name = "rxe0";
  RdmaPort q;
  q.link_layer = "Ethernet";
  q.netdev = "eth0";
  q.gids = {{1, "0000:0000:0000:0000:0000:ffff:0a00:0001", "RoCE v2", "eth0"}};
  q.roce_v2 = {{"eth0", "10.0.0.1", 4, 1}};
  e.ports = {q};
  f.rdma.devices = {d, e};

  nlohmann::json j = Doc(f)["rdmaDevices"];
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["function"], "VF");
  EXPECT_EQ(j[0]["ports"][0]["lid"], 26);
  EXPECT_EQ(j[0]["ports"][0]["smLid"], 1);
  EXPECT_EQ(j[0]["ports"][0]["netdev"], nullptr);
  EXPECT_EQ(j[0]["ports"][0]["gids"][0]["netdev"], nullptr);
  EXPECT_EQ(j[1]["pciAddress"], nullptr);
  EXPECT_EQ(j[1]["function"], "none");
  EXPECT_EQ(j[1]["ports"][0]["lid"], nullptr);
  EXPECT_EQ(
      j[1]["ports"][0]["roceV2GidIndex"][0],
      nlohmann::json(
          {{"netdev", "eth0"}, {"address", "10.0.0.1"}, {"family", "ipv4"}, {"gidIndex", 1}}));
  nlohmann::json sys = Doc(f)["rdma"];
  EXPECT_EQ(sys["netnsMode"], "exclusive");
  EXPECT_EQ(sys["persistentNetnsModeSource"], "/etc/modprobe.d/ib_core.conf");
  EXPECT_EQ(sys["devFiles"], nullptr);

  std::string t = Table(f);
  EXPECT_THAT(
      t, ::testing::ContainsRegex("mlx5_2 +0000:af:00.2 +VF +1 +InfiniBand +ACTIVE +0x1a +0x1"));
  EXPECT_THAT(t,
              ::testing::ContainsRegex(
                  "rxe0 +1 +1 +0000:0000:0000:0000:0000:ffff:0a00:0001 +10.0.0.1 +RoCE v2 +eth0"));
}

}  // namespace
}  // namespace provisioner::rdma
