// discover on real InfiniBand captures nobody on the project made (issue 18,
// items 1-3): hwloc's test topologies, the parts about their HCAs, kept as
// ttar trees in test/hosts (*-hwloc.ttar, see test/hosts/README.md).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;

json Discover(const std::string& tree) { return DiscoverJson(ExtractHost(tree)); }

const json* FindByKey(const json& list, const char* key, const std::string& value) {
  if (!list.is_array()) return nullptr;
  for (const json& e : list) {
    if (e.value(key, "") == value) return &e;
  }
  return nullptr;
}

// Item 1: the unused slots of an IB port read as the subnet prefix with a
// zero interface ID; rdma-core and show_gids skip them. One GID is left:
// index 0, the port GUID under fe80::/64.
void ExpectOneGid(const std::string& tree, const std::string& dev, const std::string& gid) {
  json j = Discover(tree);
  const json* d = FindByKey(j["rdmaDevices"], "name", dev);
  ASSERT_NE(d, nullptr) << j["rdmaDevices"].dump();
  ASSERT_EQ((*d)["ports"].size(), 1u);
  const json& gids = (*d)["ports"][0]["gids"];
  ASSERT_EQ(gids.size(), 1u) << gids.dump().substr(0, 400);
  EXPECT_EQ(gids[0]["index"], 0);
  EXPECT_EQ(gids[0]["gid"], gid);
}

TEST(RealIbCapturesTest, ConnectX3IbPortHasOneGidNotOneHundredTwentyEight) {
  ExpectOneGid("mlx4-ib-hwloc", "mlx4_0", "fe80:0000:0000:0000:0002:c903:00f9:bfa1");
}

// Item 4: the P_Key table (128 slots, 0xffff then zeros) is reported.
TEST(RealIbCapturesTest, PkeysOfIbPortsAreReported) {
  for (const auto& [tree, dev] : {std::pair<std::string, std::string>{"mlx4-ib-hwloc", "mlx4_0"},
                                  {"qib-ib-hwloc", "qib0"}}) {
    json j = Discover(tree);
    const json* d = FindByKey(j["rdmaDevices"], "name", dev);
    ASSERT_NE(d, nullptr) << tree;
    EXPECT_EQ((*d)["ports"][0]["pkeys"], json::array({"0xffff"})) << tree;
  }
}

TEST(RealIbCapturesTest, QlogicQibPortHasOneGid) {
  ExpectOneGid("qib-ib-hwloc", "qib0", "fe80:0000:0000:0000:0011:7500:0077:cfc8");
}

TEST(RealIbCapturesTest, GidTableShowsOnlyTheUsedSlot) {
  RunResult r = Provisioner({"discover", "--root", ExtractHost("mlx4-ib-hwloc")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("fe80:0000:0000:0000:0002:c903:00f9:bfa1"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("fe80:0000:0000:0000:0000:0000:0000:0000"), std::string::npos) << r.out;
}

// Item 2: an InfiniBand controller of class 0x0c06 is a NIC, selectable.
TEST(RealIbCapturesTest, QlogicHcaOfClass0c06IsANicAndSelectable) {
  json j = Discover("qib-ib-hwloc");
  const json* nic = FindByKey(j["nics"], "pciAddress", "0000:43:00.0");
  ASSERT_NE(nic, nullptr) << j["nics"].dump();
  EXPECT_EQ((*nic)["class"], "0c0600");
  EXPECT_EQ((*nic)["vendor"], "1077");
  EXPECT_EQ((*nic)["driver"], "ib_qib");
  EXPECT_EQ((*nic)["netdevs"], json::array({"ib0"}));
  EXPECT_EQ((*nic)["rdmaDevices"], json::array({"qib0"}));
  EXPECT_EQ((*nic)["rdmaDevicePending"], false);

  // A nicSelector selects it: ib0 already has mtu 2044 and is up, so the plan
  // is converged (exit 0). Were the HCA not a NIC, the selector would select
  // nothing and plan would exit 1 ("selects no PCI function on this host").
  const std::string yaml = WriteTempFile(
      "qib.yaml", HostYaml("  nics:\n"
                           "    - name: ib\n"
                           "      nicSelector: { vendor: \"1077\", deviceID: \"7322\" }\n"
                           "      mtu: 2044\n",
                           "qib-host"));
  RunResult p = Provisioner({"plan", yaml, "--root", ExtractHost("qib-ib-hwloc"), "-o", "json",
                             "--detailed-exitcode"});
  EXPECT_EQ(p.exit_code, 0) << p.out << p.err;
  json plan = json::parse(p.out, nullptr, false);
  ASSERT_FALSE(plan.is_discarded()) << p.out;
  EXPECT_EQ(plan["changes"], json::array()) << p.out;
}

// Item 3: at boot, before mlx5_ib is loaded, a ConnectX has no infiniband/
// directory. It is still a NIC; the output says the RDMA device is pending.
TEST(RealIbCapturesTest, ConnectX4WithoutRdmaDeviceYetIsListedAsPending) {
  json j = Discover("cx4-ib-noverbs-hwloc");
  for (const char* bdf : {"0000:1a:00.0", "0000:3e:00.0"}) {
    const json* nic = FindByKey(j["nics"], "pciAddress", bdf);
    ASSERT_NE(nic, nullptr) << bdf << " missing from " << j["nics"].dump();
    EXPECT_EQ((*nic)["deviceID"], "1013");
    EXPECT_EQ((*nic)["driver"], "mlx5_core");
    EXPECT_EQ((*nic)["rdmaDevices"], json::array());
    EXPECT_EQ((*nic)["rdmaDevicePending"], true);
  }
  RunResult r = Provisioner({"discover", "--root", ExtractHost("cx4-ib-noverbs-hwloc")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(not yet)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0000:1a:00.0: RDMA capable (mlx5_core), no RDMA device yet"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace provisioner::testing
