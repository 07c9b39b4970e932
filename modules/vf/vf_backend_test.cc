#include "modules/vf/vf_backend.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "engine/host/recording_host_fs.h"
#include "gtest/gtest.h"
#include "test/support/ttar.h"

namespace provisioner {
namespace {

// A kernel answering the dump with two VFs; counts what it is asked.
class FakeNetlink : public VfNetlink {
 public:
  StatusOr<std::vector<VfLinkState>> ReadVfs(const std::string& pf_netdev) override {
    ++calls;
    if (pf_netdev != "ens1f0") return NotFoundError("no " + pf_netdev);
    VfLinkState a;
    a.vf = 0;
    a.trust = true;
    a.spoof_chk = false;
    a.link_state = 1;  // IFLA_VF_LINK_STATE_ENABLE
    a.min_tx_rate = 0;
    a.max_tx_rate = 25000;
    a.vlan = 100;
    a.vlan_qos = 3;
    a.vlan_proto = 0x88a8;  // ETH_P_8021AD
    a.mac = "0e:00:01:5b:7c:2e";
    VfLinkState b;
    b.vf = 1;
    b.trust = false;  // no spoof check attribute: unknown
    return std::vector<VfLinkState>{a, b};
  }
  Status SetNodeGuid(const std::string&, int, uint64_t) override { return Count(); }
  Status SetPortGuid(const std::string&, int, uint64_t) override { return Count(); }
  Status SetTrust(const std::string&, int, bool) override { return Count(); }
  Status SetSpoofChk(const std::string&, int, bool) override { return Count(); }
  Status SetLinkState(const std::string&, int, int) override { return Count(); }
  Status SetRate(const std::string&, int, uint32_t, uint32_t) override { return Count(); }
  Status SetVlan(const std::string&, int, uint32_t, uint32_t, uint16_t) override { return Count(); }
  Status SetMac(const std::string&, int, const std::string&) override { return Count(); }
  int calls = 0;

 private:
  Status Count() {
    ++calls;
    return OkStatus();
  }
};

TEST(VfSettingsFactory, NetlinkForTheLiveRootOnly) {
  FakeNetlink nl;
  int made = 0;
  auto netlink = [&]() -> VfNetlink* {
    ++made;
    return &nl;
  };
  auto live = NewLocalHostFs("/");
  auto l = NewVfSettingsBackend(*live, netlink);
  EXPECT_TRUE(l->NeedsPfNetdev());
  EXPECT_EQ(l->Read("0000:af:00.0", "ens1f0").size(), 2u);
  EXPECT_EQ(made, 1);
  EXPECT_EQ(nl.calls, 1);

  std::string root = testing::MakeTempDir("vfb");
  ASSERT_FALSE(root.empty());
  auto tree = NewLocalHostFs(root);
  auto t = NewVfSettingsBackend(*tree, netlink);
  EXPECT_FALSE(t->NeedsPfNetdev());
  ASSERT_TRUE(t->SetFlag("0000:af:00.0", "", 3, "trust", true).ok());
  EXPECT_EQ(*tree->ReadFile("/run/provisioner/vf/0000:af:00.0/3/trust"), "1\n");
  auto g = t->SetGuids("0000:af:00.0", "", 3, 0x1234);
  ASSERT_TRUE(g.ok());
  EXPECT_FALSE(*g);    // the caller writes the OFED files
  EXPECT_EQ(made, 1);  // a tree never makes a netlink client
  EXPECT_EQ(nl.calls, 1);
}

// Snapshot: the dump's trust / spoof check answers become the tree backend's
// files, and a tree holding them reads the same state.
TEST(VfSettings, SnapshotRecordsTheNetlinkAnswerAndTheTreeReplaysIt) {
  FakeNetlink nl;
  auto live = NewLocalHostFs("/");
  HostFsRecord record;
  auto recording = NewRecordingHostFs(live.get(), &record);
  auto answered = NewNetlinkVfSettings(&nl, *recording)->Read("0000:af:00.0", "ens1f0");
  ASSERT_EQ(answered.size(), 2u);
  // VF 1 has no spoof check, link state, rate, vlan, mac answer
  EXPECT_EQ(record.captures.size(), 7u);
  EXPECT_EQ(record.captures.at("/run/provisioner/vf/0000:af:00.0/0/vlan"), "100 3 802.1ad\n");
  EXPECT_EQ(record.captures.at("/run/provisioner/vf/0000:af:00.0/0/mac"), "0e:00:01:5b:7c:2e\n");

  std::string root = testing::MakeTempDir("vfb");
  ASSERT_FALSE(root.empty());
  auto tree = NewLocalHostFs(root);
  for (const auto& [path, content] : record.captures) {
    ASSERT_TRUE(tree->WriteFileAtomic(path, content).ok()) << path;
  }
  auto replayed = NewTreeVfSettings(*tree)->Read("0000:af:00.0", "");
  ASSERT_EQ(replayed.size(), 2u);
  for (const auto& [n, s] : answered) {
    EXPECT_EQ(replayed[n].trust, s.trust) << n;
    EXPECT_EQ(replayed[n].spoof_chk, s.spoof_chk) << n;
    EXPECT_EQ(replayed[n].link_state, s.link_state) << n;
    EXPECT_EQ(replayed[n].max_tx_rate, s.max_tx_rate) << n;
    EXPECT_EQ(replayed[n].vlan, s.vlan) << n;
    EXPECT_EQ(replayed[n].vlan_qos, s.vlan_qos) << n;
    EXPECT_EQ(replayed[n].vlan_proto, s.vlan_proto) << n;
    EXPECT_EQ(replayed[n].mac, s.mac) << n;
  }
}

// Issue 35.3: the tree backend refuses what mlx5 refuses, with its errno:
// any 802.1ad VF VLAN (mlx5e_set_vf_vlan: EPROTONOSUPPORT), and a VF's VLAN,
// link state and spoof check while the E-Switch is in switchdev mode
// (esw/legacy.c: EOPNOTSUPP; VLAN 0 accepted and ignored). Another driver
// keeps 802.1ad.
TEST(VfSettings, TreeRefusesWhatMlx5Refuses) {
  const std::string pf = "0000:af:00.0";
  std::string root = testing::MakeTempDir("vfb");
  ASSERT_FALSE(root.empty());
  auto tree = NewLocalHostFs(root);
  ASSERT_TRUE(tree->WriteFileAtomic("/sys/bus/pci/drivers/ice/.keep", "").ok());
  ASSERT_TRUE(tree->WriteFileAtomic("/sys/bus/pci/drivers/mlx5_core/.keep", "").ok());
  ASSERT_TRUE(tree->WriteFileAtomic("/sys/bus/pci/devices/" + pf + "/vendor", "0x15b3\n").ok());
  const std::string link = root + "/sys/bus/pci/devices/" + pf + "/driver";
  ASSERT_EQ(::symlink("../../../../bus/pci/drivers/ice", link.c_str()), 0);
  auto t = NewTreeVfSettings(*tree);
  EXPECT_TRUE(t->SetVlan(pf, "", 0, 100, 0, 0x88a8).ok());  // ice: 802.1ad kept
  ASSERT_EQ(::unlink(link.c_str()), 0);
  ASSERT_EQ(::symlink("../../../../bus/pci/drivers/mlx5_core", link.c_str()), 0);
  Status s = t->SetVlan(pf, "", 0, 100, 0, 0x88a8);
  EXPECT_EQ(s.err(), EPROTONOSUPPORT) << s.message();
  EXPECT_TRUE(t->SetVlan(pf, "", 0, 100, 0, 0x8100).ok());  // legacy (no capture): 802.1Q set
  EXPECT_TRUE(t->SetLinkState(pf, "", 0, 1).ok());
  ASSERT_TRUE(
      tree->WriteFileAtomic("/run/provisioner/devlink/" + pf, "{\"mode\":\"switchdev\"}\n").ok());
  s = t->SetVlan(pf, "", 1, 100, 0, 0x8100);
  EXPECT_EQ(s.err(), EOPNOTSUPP) << s.message();
  s = t->SetLinkState(pf, "", 1, 1);
  EXPECT_EQ(s.err(), EOPNOTSUPP) << s.message();
  s = t->SetFlag(pf, "", 1, "spoofchk", false);
  EXPECT_EQ(s.err(), EOPNOTSUPP) << s.message();
  EXPECT_TRUE(t->SetVlan(pf, "", 1, 0, 0, 0x8100).ok());  // VLAN 0: "compatibility with libvirt"
  EXPECT_FALSE(tree->Exists("/run/provisioner/vf/" + pf + "/1/vlan"));
  EXPECT_TRUE(t->SetFlag(pf, "", 1, "trust", true).ok());
  EXPECT_TRUE(t->SetRate(pf, "", 1, 0, 1000).ok());
}

}  // namespace
}  // namespace provisioner
