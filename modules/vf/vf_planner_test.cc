// The VF planner from structs alone (no host).
#include "modules/vf/vf_planner.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/support/fake_pci_module.h"
#include "test/support/planned_changes.h"
#include "test/support/vf_group.h"

namespace provisioner {
namespace {

using ::testing::_;
using testing::Changed;
using testing::ChangedTo;
using ::testing::ElementsAre;

constexpr char kPf[] = "0000:af:00.0";

PciFunction Pf(const std::string& bdf, int num_vfs, const std::string& ib_guid = "") {
  PciFunction f = testing::NetworkPf(bdf, "ens6f0np0");
  f.driver = "mlx5_core";
  f.rdma_devices = {"mlx5_0"};
  f.iommu_group = "6";
  SriovInfo s;
  s.total_vfs = 127;
  s.num_vfs = num_vfs;
  s.drivers_autoprobe = true;
  s.ib_node_guid = ib_guid;
  for (int i = 0; i < num_vfs; ++i) {
    VfInfo vf;
    vf.vf_index = i;
    vf.pci_address = "0000:af:01." + std::to_string(i);
    vf.driver = "mlx5_core";
    s.vfs.push_back(vf);
  }
  f.sriov = s;
  return f;
}

HostFacts Facts(std::vector<PciFunction> pfs) {
  HostFacts h;
  h.pci = std::move(pfs);
  return h;
}

NicSpec Nic(std::optional<int> num_vfs) {
  NicSpec n;
  n.name = "nic0";
  n.selector.root_devices = {kPf};
  n.num_vfs = num_vfs;
  return n;
}

struct Result {
  std::vector<Change> changes;
  std::vector<Diagnostic> diagnostics;
  std::string Messages() const {
    std::string out;
    for (const auto& d : diagnostics) out += d.path + ": " + d.message + "\n";
    return out;
  }
};

// A plan of nothing whose diagnostics are `messages` (Result::Messages()).
::testing::Matcher<Result> Refused(const std::string& messages) {
  return ::testing::AllOf(::testing::Field(&Result::changes, ::testing::IsEmpty()),
                          ::testing::Property(&Result::Messages, messages));
}

// One nic (Nic(num_vfs)) with `field` set to `value`.
template <typename T, typename V>
DesiredState Wants(int num_vfs, T NicSpec::*field, V value) {
  DesiredState d;
  d.nics.push_back(Nic(num_vfs));
  d.nics[0].*field = value;
  return d;
}

Result PlanOf(const DesiredState& d, const HostFacts& h) {
  PlanSink sink;
  PlanVf(d, h, sink);
  return {sink.changes(), sink.diagnostics()};
}

TEST(VfGuidTest, DerivedFromThePfGuidAndTheIndex) {
  const uint64_t pf = *ParseGuid("ec0d:9a03:008a:bcde");
  EXPECT_EQ(FormatGuid(DeriveVfGuid(pf, 0)), "ee0d:9a00:018a:bcde");
  EXPECT_EQ(FormatGuid(DeriveVfGuid(pf, 1)), "ee0d:9a00:028a:bcde");
  EXPECT_EQ(FormatGuid(DeriveVfGuid(pf, 65533)), "ee0d:9aff:fe8a:bcde");
  EXPECT_EQ(DeriveVfGuid(pf, 5), DeriveVfGuid(pf, 5));  // stable
  std::set<uint64_t> seen = {pf};
  for (int i = 0; i < 1024; ++i) EXPECT_TRUE(seen.insert(DeriveVfGuid(pf, i)).second) << i;
  EXPECT_NE(DeriveVfGuid(0, 0), 0u);
  EXPECT_EQ(DeriveVfGuid(0x0100000000000000ULL, 0) >> 56, 0x02u);  // unicast, local
}

TEST(VfGuidTest, ParseAndFormat) {
  EXPECT_EQ(ParseGuid("ec0d:9a03:008a:bcde"), 0xec0d9a03008abcdeULL);
  EXPECT_EQ(ParseGuid("EC:0D:9A:03:00:8A:BC:DE"), 0xec0d9a03008abcdeULL);
  for (const char* bad : {"", "ec0d:9a03:008a", "ec0d9a03008abcde", "ec0d:9a03:008a:bcdg",
                          "ec:0d:9a:03:00:8a:bc", "ec0d:9a:03:008a:bcde", "ec0d:9a03:008a:bcde:"}) {
    EXPECT_FALSE(ParseGuid(bad).has_value()) << bad;
  }
  EXPECT_EQ(FormatGuidBytes(0xee0d9a00018abcdeULL), "ee:0d:9a:00:01:8a:bc:de");
  EXPECT_EQ(VfNetdeviceDriver("igb"), "igbvf");
  EXPECT_EQ(VfNetdeviceDriver("ice"), "iavf");
  EXPECT_EQ(VfNetdeviceDriver("mlx5_core"), "mlx5_core");
}

TEST(VfBindingPlanTest, VfioForVfsThatDoNotExistYet) {
  DesiredState d = Wants(8, &NicSpec::device_type, "vfio-pci");
  Result r = PlanOf(d, Facts({Pf(kPf, 0)}));
  ASSERT_EQ(r.changes.size(), 1u) << r.Messages();
  const Change& c = r.changes[0];
  EXPECT_EQ(c.id, "vf/0000:af:00.0/driver");
  EXPECT_EQ(c.before, nlohmann::json::array());
  EXPECT_EQ(c.after, "vfio-pci");
  EXPECT_EQ(c.phase, kPhaseVfBinding);
  EXPECT_EQ(c.field_path, "spec.nics[0].deviceType");
  EXPECT_EQ(c.detail["count"], 8);
  // vfio_pci is neither loaded nor asked for: a warning, at the field.
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].severity, Severity::kWarning);
  EXPECT_EQ(r.diagnostics[0].path, "spec.nics[0].deviceType");
  EXPECT_NE(r.diagnostics[0].message.find("vfio_pci"), std::string::npos);

  d.kernel_modules.push_back({"vfio_pci", true});
  EXPECT_TRUE(PlanOf(d, Facts({Pf(kPf, 0)})).diagnostics.empty());
  d.kernel_modules.clear();
  HostFacts loaded = Facts({Pf(kPf, 0)});
  loaded.pci_drivers = {"mlx5_core", "vfio-pci"};
  EXPECT_TRUE(PlanOf(d, loaded).diagnostics.empty());
}

TEST(VfBindingPlanTest, NoChangeOnceBound) {
  DesiredState d = Wants(2, &NicSpec::device_type, "vfio-pci");
  d.kernel_modules.push_back({"vfio_pci", true});
  PciFunction pf = Pf(kPf, 2);
  for (auto& vf : pf.sriov->vfs) vf.driver = "vfio-pci";
  EXPECT_TRUE(PlanOf(d, Facts({pf})).changes.empty());
  // One VF elsewhere: a change, showing each VF's driver.
  pf.sriov->vfs[1].driver = "";
  Result r = PlanOf(d, Facts({pf}));
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_EQ(r.changes[0].before, (nlohmann::json{"vfio-pci", nullptr}));
  // numVfs unset: the current count is kept.
  d.nics[0].num_vfs.reset();
  EXPECT_EQ(PlanOf(d, Facts({pf})).changes.size(), 1u);
  // Count changing: the VFs are re-created on mlx5_core, so bind again.
  for (auto& vf : pf.sriov->vfs) vf.driver = "vfio-pci";
  d.nics[0].num_vfs = 4;
  EXPECT_EQ(PlanOf(d, Facts({pf})).changes.size(), 1u);
}

TEST(VfBindingPlanTest, NetdeviceFollowsAutoprobe) {
  DesiredState d = Wants(8, &NicSpec::device_type, "netdevice");
  // Autoprobe binds new VFs to mlx5_core: nothing to do.
  EXPECT_TRUE(PlanOf(d, Facts({Pf(kPf, 0)})).changes.empty());
  PciFunction pf = Pf(kPf, 0);
  pf.sriov->drivers_autoprobe = false;
  Result r = PlanOf(d, Facts({pf}));
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_EQ(r.changes[0].after, "mlx5_core");
  // VFs on vfio-pci go back to the PF's VF driver.
  PciFunction bound = Pf(kPf, 8);
  for (auto& vf : bound.sriov->vfs) vf.driver = "vfio-pci";
  r = PlanOf(d, Facts({bound}));
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_EQ(r.changes[0].after, "mlx5_core");
  EXPECT_TRUE(r.diagnostics.empty());
}

TEST(VfBindingPlanTest, VfioWithoutIommuIsAnError) {
  DesiredState d = Wants(8, &NicSpec::device_type, "vfio-pci");
  PciFunction pf = Pf(kPf, 0);
  pf.iommu_group.clear();
  Result r = PlanOf(d, Facts({pf}));
  EXPECT_TRUE(r.changes.empty());
  ASSERT_FALSE(r.diagnostics.empty());
  EXPECT_EQ(r.diagnostics[0].severity, Severity::kError);
  EXPECT_NE(r.diagnostics[0].message.find("iommu_group"), std::string::npos);
  // The hint the sriov-network-operator acts on, as the field that sets it.
  EXPECT_NE(r.diagnostics[0].message.find("spec.kernel.cmdline: [intel_iommu=on, iommu=pt]"),
            std::string::npos)
      << r.diagnostics[0].message;
}

// Issue 28 item 3: with vfGroups the driver is per VF: a group's deviceType,
// else the nic's; VFs in no group of a nic without deviceType are not the
// change's (detail.vfIndexes), and only the vfio group's VFs need an IOMMU
// group.
TEST(VfBindingPlanTest, VfGroupsBindPerVf) {
  DesiredState d;
  d.kernel_modules.push_back({"vfio_pci", true});
  d.nics.push_back(Nic(4));
  d.nics[0].device_type = "vfio-pci";  // VFs 2-3 (no group) follow it
  d.nics[0].vf_groups = {testing::VfGroup(0, 1, "netdevice")};
  PciFunction pf = Pf(kPf, 4);
  Result r = PlanOf(d, Facts({pf}));
  ASSERT_EQ(r.changes.size(), 1u) << r.Messages();
  EXPECT_EQ(r.changes[0].after, (nlohmann::json{"mlx5_core", "mlx5_core", "vfio-pci", "vfio-pci"}));
  EXPECT_EQ(r.changes[0].detail["vfIndexes"], (nlohmann::json{0, 1, 2, 3}));
  EXPECT_EQ(r.changes[0].field_path, "spec.nics[0].deviceType");

  // No nic deviceType: VFs 2-3 are nobody's; already there: no change.
  d.nics[0].device_type.reset();
  d.nics[0].vf_groups = {testing::VfGroup(0, 1, "vfio-pci")};
  pf.sriov->vfs[2].driver = "";  // unmanaged: left unbound
  r = PlanOf(d, Facts({pf}));
  ASSERT_EQ(r.changes.size(), 1u) << r.Messages();
  EXPECT_EQ(r.changes[0].after, (nlohmann::json{"vfio-pci", "vfio-pci", nullptr, nullptr}));
  EXPECT_EQ(r.changes[0].detail["vfIndexes"], (nlohmann::json{0, 1}));
  EXPECT_EQ(r.changes[0].field_path, "spec.nics[0].vfGroups[0].deviceType");
  for (int i = 0; i < 2; ++i) pf.sriov->vfs[static_cast<size_t>(i)].driver = "vfio-pci";
  EXPECT_TRUE(PlanOf(d, Facts({pf})).changes.empty());

  // A VF of the netdevice group without an IOMMU group is no error; one of
  // the vfio group is.
  HostFacts h = Facts({Pf(kPf, 4)});
  PciFunction vf3;
  vf3.pci_address = "0000:af:01.3";
  h.pci.push_back(vf3);  // no iommu_group
  d.nics[0].vf_groups = {testing::VfGroup(0, 1, "vfio-pci"), testing::VfGroup(2, 3, "netdevice")};
  r = PlanOf(d, h);
  EXPECT_EQ(r.changes.size(), 1u) << r.Messages();
  EXPECT_TRUE(r.diagnostics.empty()) << r.Messages();
  d.nics[0].vf_groups = {testing::VfGroup(0, 1, "netdevice"), testing::VfGroup(2, 3, "vfio-pci")};
  r = PlanOf(d, h);
  EXPECT_TRUE(r.changes.empty());
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].path, "spec.nics[0].vfGroups[1].deviceType");
  EXPECT_NE(r.diagnostics[0].message.find("0000:af:01.3 has no iommu_group"), std::string::npos)
      << r.Messages();
}

TEST(VfFlagPlanTest, TrustAndSpoofCheck) {
  DesiredState d = Wants(2, &NicSpec::vf_trust, true);
  d.nics[0].vf_spoof_chk = false;
  PciFunction pf = Pf(kPf, 2);
  Result r = PlanOf(d, Facts({pf}));  // state unknown
  ASSERT_THAT(r.changes, ElementsAre(Changed("vf/0000:af:00.0/trust",
                                             (nlohmann::json{nullptr, nullptr}), true),
                                     ChangedTo("vf/0000:af:00.0/spoofChk", false)))
      << r.Messages();
  EXPECT_EQ(r.changes[0].phase, kPhaseVfSettings);
  EXPECT_EQ(r.changes[0].field_path, "spec.nics[0].vfTrust");
  for (auto& vf : pf.sriov->vfs) {
    vf.trust = true;
    vf.spoof_chk = false;
  }
  EXPECT_TRUE(PlanOf(d, Facts({pf})).changes.empty());
  pf.sriov->vfs[0].spoof_chk = true;
  r = PlanOf(d, Facts({pf}));
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_EQ(r.changes[0].attribute, "spoofChk");
  // New VFs: set again.
  d.nics[0].num_vfs = 4;
  EXPECT_EQ(PlanOf(d, Facts({pf})).changes.size(), 2u);
  // No PF netdev: no netlink target.
  pf.netdevs.clear();
  r = PlanOf(d, Facts({pf}));
  EXPECT_TRUE(r.changes.empty());
  EXPECT_EQ(r.diagnostics.size(), 2u);
}

TEST(VfLinkStatePlanTest, EveryVfOrARange) {
  DesiredState d = Wants(4, &NicSpec::vf_link_state, "enable");
  // VFs made by this plan: before unknown, applied after numVfs.
  Result r = PlanOf(d, Facts({Pf(kPf, 0)}));
  ASSERT_THAT(r.changes, ElementsAre(ChangedTo("vf/0000:af:00.0/linkState", "enable")))
      << r.Messages();
  EXPECT_TRUE(r.changes[0].before.is_null());
  EXPECT_EQ(r.changes[0].phase, kPhaseVfSettings);
  EXPECT_EQ(r.changes[0].field_path, "spec.nics[0].vfLinkState");
  EXPECT_EQ(r.changes[0].detail["first"], 0);
  EXPECT_EQ(r.changes[0].detail["last"], 3);
  EXPECT_EQ(r.changes[0].detail["netdev"], "ens6f0np0");
  // VFs there: each one's state before (unknown: null).
  PciFunction pf = Pf(kPf, 4);
  pf.sriov->vfs[0].link_state = "auto";
  pf.sriov->vfs[1].link_state = "enable";
  r = PlanOf(d, Facts({pf}));
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_EQ(r.changes[0].before, (nlohmann::json{"auto", "enable", nullptr, nullptr}));
  for (auto& vf : pf.sriov->vfs) vf.link_state = "enable";
  EXPECT_TRUE(PlanOf(d, Facts({pf})).changes.empty());
  // What a VF group calls: VFs 2-3 only.
  PlanSink sink;
  PlanVfLinkState(pf, "disable", VfRangeRef{2, 3, 4, "nic0", "spec.nics[0].vfGroups[1]"}, sink);
  ASSERT_EQ(sink.changes().size(), 1u);
  EXPECT_EQ(sink.changes()[0].id, "vf/0000:af:00.0/linkState#2-3");
  EXPECT_EQ(sink.changes()[0].before, (nlohmann::json{"enable", "enable"}));
  PlanSink outside;
  PlanVfLinkState(pf, "disable", VfRangeRef{3, 4, 4, "nic0", "spec.nics[0].vfGroups[1]"}, outside);
  ASSERT_EQ(outside.diagnostics().size(), 1u);
  EXPECT_EQ(outside.diagnostics()[0].message,
            "VFs 3-4 are not VFs of 0000:af:00.0 (it will have 4)");
  // No PF netdev: no netlink target.
  pf.netdevs.clear();
  pf.sriov->vfs[0].link_state = "auto";
  r = PlanOf(d, Facts({pf}));
  EXPECT_TRUE(r.changes.empty());
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].path, "spec.nics[0].vfLinkState");
}

TEST(VfRatePlanTest, BothRatesPerVf) {
  DesiredState d = Wants(2, &NicSpec::vf_rate, VfRateSpec{0, 10000});
  PciFunction pf = Pf(kPf, 2);
  Result r = PlanOf(d, Facts({pf}));
  ASSERT_THAT(r.changes,
              ElementsAre(Changed("vf/0000:af:00.0/rate", (nlohmann::json{nullptr, nullptr}),
                                  (nlohmann::json{{"min", 0}, {"max", 10000}}))))
      << r.Messages();
  EXPECT_EQ(r.changes[0].field_path, "spec.nics[0].vfRate");
  for (auto& vf : pf.sriov->vfs) {
    vf.min_tx_rate = 0;
    vf.max_tx_rate = 10000;
  }
  EXPECT_TRUE(PlanOf(d, Facts({pf})).changes.empty());
  pf.sriov->vfs[1].min_tx_rate = 500;
  r = PlanOf(d, Facts({pf}));
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_EQ(r.changes[0].before[1], (nlohmann::json{{"min", 500}, {"max", 10000}}));
}

// vfVlan: {id, qos, proto} per VF; a VF on another VLAN, priority or
// protocol (or unknown) is planned, a range gets its own id.
TEST(VfVlanPlanTest, IdQosAndProtoPerVf) {
  DesiredState d = Wants(2, &NicSpec::vf_vlan, VfVlanSpec{100, 3, "802.1Q"});
  PciFunction pf = Pf(kPf, 2);
  Result r = PlanOf(d, Facts({pf}));
  ASSERT_THAT(r.changes,
              ElementsAre(Changed("vf/0000:af:00.0/vlan", (nlohmann::json{nullptr, nullptr}),
                                  (nlohmann::json{{"id", 100}, {"qos", 3}, {"proto", "802.1Q"}}))))
      << r.Messages();
  EXPECT_EQ(r.changes[0].field_path, "spec.nics[0].vfVlan");
  for (auto& vf : pf.sriov->vfs) {
    vf.vlan_id = 100;
    vf.vlan_qos = 3;
    vf.vlan_proto = "802.1Q";
  }
  EXPECT_TRUE(PlanOf(d, Facts({pf})).changes.empty());
  pf.sriov->vfs[1].vlan_proto = "802.1ad";  // same id and qos, other protocol
  r = PlanOf(d, Facts({pf}));
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_EQ(r.changes[0].before[1],
            (nlohmann::json{{"id", 100}, {"qos", 3}, {"proto", "802.1ad"}}));
  PlanSink range;
  PlanVfVlan(pf, VfVlanSpec{0, 0, "802.1Q"},
             VfRangeRef{1, 1, 2, "nic0", "spec.nics[0].vfGroups[0]"}, range);
  EXPECT_THAT(range.changes(),
              ElementsAre(ChangedTo("vf/0000:af:00.0/vlan#1-1",
                                    (nlohmann::json{{"id", 0}, {"qos", 0}, {"proto", "802.1Q"}}))));
}

// Issue 35.3: mlx5 answers EPROTONOSUPPORT to any 802.1ad VF VLAN: a plan
// error at the field naming the driver; another driver keeps 802.1ad.
TEST(VfVlanPlanTest, Mlx5RefusesEightOhTwoDotOneAd) {
  DesiredState d = Wants(2, &NicSpec::vf_vlan, VfVlanSpec{100, 3, "802.1ad"});
  PciFunction pf = Pf(kPf, 2);
  Result r = PlanOf(d, Facts({pf}));
  EXPECT_THAT(
      r,
      Refused("spec.nics[0].vfVlan: 0000:af:00.0 is driven by mlx5_core, which refuses an 802.1ad "
              "VF VLAN (EPROTONOSUPPORT from mlx5e_set_vf_vlan: 802.1Q only); use proto 802.1Q\n"));
  pf.driver = "ice";
  r = PlanOf(d, Facts({pf}));
  ASSERT_EQ(r.changes.size(), 1u) << r.Messages();
  EXPECT_EQ(r.changes[0].after, (nlohmann::json{{"id", 100}, {"qos", 3}, {"proto", "802.1ad"}}));
}

// vfMac derived: the formula of vf_planner.h (values from an independent
// Python implementation of FNV-1a 64 + fmix64), stable, unicast and locally
// administered, and no two VFs alike across both ports of a card (whose MACs
// differ in the last byte) and a second card.
TEST(VfMacTest, DerivedFromThePfMacAndTheIndexWithoutCollisions) {
  EXPECT_EQ(DeriveVfMac("0c:42:a1:5b:7c:2e", 0), "0a:1d:87:23:60:8d");
  EXPECT_EQ(DeriveVfMac("0c:42:a1:5b:7c:2e", 1), "96:be:3e:76:a4:4b");
  EXPECT_EQ(DeriveVfMac("0C:42:A1:5B:7C:2F", 0), "f6:19:00:50:0a:d9");  // port 2
  EXPECT_EQ(DeriveVfMac("b8:ce:f6:8a:bc:de", 65534), "c6:48:02:de:73:1d");
  EXPECT_EQ(DeriveVfMac("0c:42:a1:5b:7c:2e", 7), DeriveVfMac("0c:42:a1:5b:7c:2e", 7));
  EXPECT_EQ(DeriveVfMac("01:00:00:00:00:00", 0), "3a:4b:a6:52:38:26");
  EXPECT_EQ(DeriveVfMac("not a mac", 0), "");
  EXPECT_EQ(DeriveVfMac("0c:42:a1:5b:7c:2e", 65535), "");
  EXPECT_EQ(DeriveVfMac("0c:42:a1:5b:7c:2e", -1), "");
  const std::vector<std::string> pfs = {"0c:42:a1:5b:7c:2e", "0c:42:a1:5b:7c:2f",
                                        "0c:42:a1:5b:80:10", "0c:42:a1:5b:80:11"};
  std::set<std::string> seen(pfs.begin(), pfs.end());
  for (const std::string& pf : pfs) {
    for (int i = 0; i < 256; ++i) {
      const std::string m = DeriveVfMac(pf, i);
      auto b = ParseMacAddress(m);
      ASSERT_TRUE(b.has_value()) << m;
      EXPECT_EQ((*b)[0] & 0x03, 0x02) << m;  // unicast, locally administered
      EXPECT_TRUE(seen.insert(m).second) << pf << " VF " << i << " " << m;
    }
  }
}

// Issue 35.4: two NVIDIA OUIs that share byte 0 (b8:ce:f6, b8:59:9f) and
// have the same low three bytes: every byte of the PF MAC counts, so their
// 128 VFs each get disjoint MACs (the old formula gave both the same set).
TEST(VfMacTest, TwoOuisSharingByteZeroWithEqualLowBytesGetDisjointMacs) {
  EXPECT_EQ(DeriveVfMac("b8:ce:f6:8a:bc:de", 0), "2a:60:ef:dd:bd:2b");
  EXPECT_EQ(DeriveVfMac("b8:59:9f:8a:bc:de", 0), "ae:2f:93:fb:eb:f7");
  std::set<std::string> a, b;
  for (int i = 0; i < 128; ++i) {
    a.insert(DeriveVfMac("b8:ce:f6:8a:bc:de", i));
    b.insert(DeriveVfMac("b8:59:9f:8a:bc:de", i));
  }
  EXPECT_EQ(a.size(), 128u);
  EXPECT_EQ(b.size(), 128u);
  for (const std::string& m : a) EXPECT_EQ(b.count(m), 0u) << m;
}

TEST(VfMacTest, ParseAndFormat) {
  auto b = ParseMacAddress("0C:42:a1:5b:7c:2E");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(FormatMacAddress(b->data()), "0c:42:a1:5b:7c:2e");
  for (const char* bad : {"", "0c:42:a1:5b:7c", "0c:42:a1:5b:7c:2e:", "0c-42-a1-5b-7c-2e",
                          "0c:42:a1:5b:7c:2g", "0c:42:a1:5b:7c:2e\n"}) {
    EXPECT_FALSE(ParseMacAddress(bad).has_value()) << bad;
  }
}

PciFunction MacPf(int num_vfs) {
  PciFunction pf = Pf(kPf, num_vfs);
  pf.sriov->pf_mac = "0c:42:a1:5b:7c:2e";
  pf.sriov->pf_addr_assign_type = 0;
  for (auto& vf : pf.sriov->vfs) {
    vf.netdev_mac = "a2:00:00:00:00:0" + std::to_string(vf.vf_index);
    vf.mac = "00:00:00:00:00:00";  // what mlx5 shows after VF creation
  }
  return pf;
}

// keep: a VF is done when its table MAC is not zero and its netdev has it.
TEST(VfMacPlanTest, KeepCopiesTheNetdevMacUntilTheTableHasIt) {
  DesiredState d = Wants(2, &NicSpec::vf_mac, "keep");
  PciFunction pf = MacPf(2);
  Result r = PlanOf(d, Facts({pf}));
  ASSERT_THAT(r.changes, ElementsAre(Changed(
                             "vf/0000:af:00.0/mac",
                             (nlohmann::json{"00:00:00:00:00:00", "00:00:00:00:00:00"}), "keep")))
      << r.Messages();
  EXPECT_EQ(r.changes[0].field_path, "spec.nics[0].vfMac");
  EXPECT_EQ(r.changes[0].phase, kPhaseVfSettings);
  for (auto& vf : pf.sriov->vfs) vf.mac = vf.netdev_mac;
  EXPECT_TRUE(PlanOf(d, Facts({pf})).changes.empty()) << PlanOf(d, Facts({pf})).Messages();
  pf.sriov->vfs[1].netdev_mac = "a2:00:00:00:00:99";  // set in the table, not rebound since
  EXPECT_EQ(PlanOf(d, Facts({pf})).changes.size(), 1u);
  // Bound to vfio-pci (no netdev) with a MAC in the table: done.
  pf.sriov->vfs[1].netdev_mac.clear();
  pf.sriov->vfs[1].driver = "vfio-pci";
  EXPECT_TRUE(PlanOf(d, Facts({pf})).changes.empty());
  // ... without one: nothing to copy.
  pf.sriov->vfs[1].mac = "00:00:00:00:00:00";
  r = PlanOf(d, Facts({pf}));
  EXPECT_THAT(
      r,
      Refused("spec.nics[0].vfMac: VF 1 (0000:af:01.1) is on vfio-pci: it has no netdev whose MAC "
              "keep could copy, and no MAC in the PF's table; use vfMac: derived\n"));
  // VFs this plan makes: planned, the MACs are read at apply.
  d.nics[0].num_vfs = 4;
  r = PlanOf(d, Facts({pf}));
  ASSERT_EQ(r.changes.size(), 1u) << r.Messages();
  EXPECT_TRUE(r.changes[0].before.is_null());
  pf.sriov->drivers_autoprobe = false;  // made VFs stay unbound: no netdev
  r = PlanOf(d, Facts({pf}));
  EXPECT_THAT(
      r,
      Refused("spec.nics[0].vfMac: 0000:af:00.0 has sriov_drivers_autoprobe 0: the VFs this plan "
              "makes have no netdev whose MAC keep could copy; use vfMac: derived\n"));
}

TEST(VfMacPlanTest, DerivedCarriesTheMacsAndARangeItsOwn) {
  DesiredState d = Wants(2, &NicSpec::vf_mac, "derived");
  PciFunction pf = MacPf(2);
  Result r = PlanOf(d, Facts({pf}));
  ASSERT_EQ(r.changes.size(), 1u) << r.Messages();
  EXPECT_EQ(r.changes[0].after["mode"], "derived");
  EXPECT_EQ(r.changes[0].after["macs"], (nlohmann::json{"0a:1d:87:23:60:8d", "96:be:3e:76:a4:4b"}));
  // keep's state (the netdev's random MAC in the table) is not derived's.
  for (auto& vf : pf.sriov->vfs) vf.mac = vf.netdev_mac;
  EXPECT_EQ(PlanOf(d, Facts({pf})).changes.size(), 1u);
  for (auto& vf : pf.sriov->vfs) {
    vf.mac = DeriveVfMac("0c:42:a1:5b:7c:2e", vf.vf_index);
    vf.netdev_mac = *vf.mac;
  }
  EXPECT_TRUE(PlanOf(d, Facts({pf})).changes.empty());
  PlanSink range;
  pf.sriov->vfs[1].mac = "00:00:00:00:00:00";
  PlanVfMac(pf, "derived", VfRangeRef{1, 1, 2, "nic0", "spec.nics[0].vfGroups[0].vfMac"}, range);
  ASSERT_THAT(
      range.changes(),
      ElementsAre(Changed("vf/0000:af:00.0/mac#1-1", (nlohmann::json{"00:00:00:00:00:00"}),
                          (nlohmann::json{{"mode", "derived"}, {"macs", {"96:be:3e:76:a4:4b"}}}))));
  EXPECT_EQ(range.changes()[0].reason,
            "nic nic0 wants VFs 1-1 MAC derived from 0c:42:a1:5b:7c:2e (96:be:3e:76:a4:4b)");
}

// vfGroups: a group's own vfMac for its VFs, the nic's for the VFs in no
// group, one change per range, each at the field that asks for it.
TEST(VfMacPlanTest, EachGroupItsOwnModeVfsInNoGroupTheNics) {
  DesiredState d = Wants(4, &NicSpec::vf_mac, "derived");
  VfGroupSpec keep;
  keep.range = "0-1";
  keep.first = 0;
  keep.last = 1;
  keep.vf_mac = "keep";
  VfGroupSpec inherits;
  inherits.range = "3";
  inherits.first = 3;
  inherits.last = 3;
  d.nics[0].vf_groups = {keep, inherits};
  PciFunction pf = MacPf(4);
  Result r = PlanOf(d, Facts({pf}));
  ASSERT_THAT(
      r.changes,
      ElementsAre(
          ChangedTo("vf/0000:af:00.0/mac#0-1", "keep"),
          ChangedTo("vf/0000:af:00.0/mac#2-2",
                    (nlohmann::json{{"mode", "derived"}, {"macs", {"92:18:8b:e0:e2:14"}}})),
          ChangedTo("vf/0000:af:00.0/mac#3-3",
                    (nlohmann::json{{"mode", "derived"}, {"macs", {"ba:96:bf:fe:d7:b2"}}}))))
      << r.Messages();
  EXPECT_EQ(r.changes[0].field_path, "spec.nics[0].vfGroups[0].vfMac");
  EXPECT_EQ(r.changes[1].field_path, "spec.nics[0].vfMac");
  EXPECT_EQ(r.changes[2].field_path, "spec.nics[0].vfMac");
}

// Issue 35.4: derived MACs are a hash, so the plan checks the host: two PFs
// that report the same burnt-in MAC (a firmware fault) would give their VFs
// the same MACs; the second is an error at its field, the first planned.
TEST(VfMacPlanTest, ADerivedMacTwiceOnTheHostIsAnError) {
  DesiredState d = Wants(2, &NicSpec::vf_mac, "derived");
  d.nics.push_back(Nic(2));
  d.nics[1].name = "nic1";
  d.nics[1].selector.root_devices = {"0000:af:00.1"};
  d.nics[1].vf_mac = "derived";
  PciFunction a = MacPf(2);
  PciFunction b = MacPf(2);
  b.pci_address = "0000:af:00.1";
  Result r = PlanOf(d, Facts({a, b}));
  ASSERT_EQ(r.changes.size(), 1u) << r.Messages();
  EXPECT_EQ(r.changes[0].target, kPf);
  EXPECT_EQ(r.Messages(),
            "spec.nics[1].vfMac: the MAC derived for VF 0 of 0000:af:00.1 (0a:1d:87:23:60:8d) "
            "is also VF 0 of 0000:af:00.0's: two VFs of one host cannot share a MAC; use vfMac: "
            "keep for one of them\n");
}

TEST(VfMacPlanTest, RefusedWithoutABurntInMacOrOnAnInfiniBandPort) {
  DesiredState d = Wants(2, &NicSpec::vf_mac, "derived");
  PciFunction pf = MacPf(2);
  pf.sriov->pf_addr_assign_type = 3;  // NET_ADDR_SET: a bond gave it its MAC
  Result r = PlanOf(d, Facts({pf}));
  EXPECT_THAT(
      r,
      Refused("spec.nics[0].vfMac: 0000:af:00.0: ens6f0np0's address 0c:42:a1:5b:7c:2e is not its "
              "burnt-in MAC (addr_assign_type 3: set by a bond or `ip link set address`), so MACs "
              "derived from it would change with it; use vfMac: keep\n"));
  PciFunction ib = Pf(kPf, 2, "ec0d:9a03:008a:bcde");
  d.nics[0].vf_mac = "keep";
  r = PlanOf(d, Facts({ib}));
  EXPECT_TRUE(r.changes.empty());
  EXPECT_NE(r.Messages().find("spec.nics[0].vfMac: 0000:af:00.0's port is InfiniBand"),
            std::string::npos)
      << r.Messages();
}

DesiredState IbSriov(int num_vfs) {
  DesiredState d;
  d.nics.push_back(Nic(num_vfs));
  MultusConfigSpec m;
  m.name = "ib";
  m.cni_type = "ib-sriov";
  m.nic = "nic0";
  d.multus_configs.push_back(m);
  return d;
}

TEST(VfGuidPlanTest, IbSriovNicsGetDerivedGuids) {
  DesiredState d = IbSriov(2);
  PciFunction pf = Pf(kPf, 0, "ec0d:9a03:008a:bcde");
  Result r = PlanOf(d, Facts({pf}));
  ASSERT_EQ(r.changes.size(), 1u) << r.Messages();
  const Change& c = r.changes[0];
  EXPECT_EQ(c.id, "vf/0000:af:00.0/ibGuids");
  EXPECT_EQ(c.after, (nlohmann::json{"ee0d:9a00:018a:bcde", "ee0d:9a00:028a:bcde"}));
  EXPECT_EQ(c.phase, kPhaseVfSettings);
  EXPECT_EQ(c.field_path, "spec.multusConfigs[0].cniType");

  PciFunction done = Pf(kPf, 2, "ec0d:9a03:008a:bcde");
  done.sriov->vfs[0].ib_node_guid = done.sriov->vfs[0].ib_port_guid = "ee0d:9a00:018a:bcde";
  done.sriov->vfs[1].ib_node_guid = done.sriov->vfs[1].ib_port_guid = "ee0d:9a00:028a:bcde";
  EXPECT_TRUE(PlanOf(d, Facts({done})).changes.empty());
  done.sriov->vfs[1].ib_port_guid = "ec0d:9a03:008a:c001";  // port GUID still the default
  r = PlanOf(d, Facts({done}));
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_EQ(r.changes[0].before, (nlohmann::json{"ee0d:9a00:018a:bcde", "ee0d:9a00:028a:bcde"}));

  // A sriov (RoCE) config asks for no GUIDs.
  d.multus_configs[0].cni_type = "sriov";
  EXPECT_TRUE(PlanOf(d, Facts({pf})).changes.empty());
}

TEST(VfGuidPlanTest, NotInfiniBandNowIsAWarning) {
  Result r = PlanOf(IbSriov(2), Facts({Pf(kPf, 0, "")}));
  EXPECT_TRUE(r.changes.empty());
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].severity, Severity::kWarning);
  EXPECT_EQ(r.diagnostics[0].path, "spec.multusConfigs[0].cniType");
}

TEST(VfGuidPlanTest, CollisionsAcrossPfsAreErrors) {
  DesiredState d = IbSriov(2);
  d.nics[0].selector.root_devices = {"0000:af:00.0", "0000:af:00.1"};
  // Differ only in bytes 3-4, which the derivation replaces.
  Result r = PlanOf(d, Facts({Pf("0000:af:00.0", 0, "ec0d:9a03:008a:bcde"),
                              Pf("0000:af:00.1", 0, "ec0d:9a04:008a:bcde")}));
  ASSERT_EQ(r.changes.size(), 1u);
  ASSERT_EQ(r.diagnostics.size(), 1u) << r.Messages();
  EXPECT_EQ(r.diagnostics[0].severity, Severity::kError);
  EXPECT_NE(r.diagnostics[0].message.find("VF 0 of 0000:af:00.0"), std::string::npos)
      << r.Messages();
  // Dual-port cards (consecutive GUIDs) are fine.
  r = PlanOf(d, Facts({Pf("0000:af:00.0", 0, "ec0d:9a03:008a:bcde"),
                       Pf("0000:af:00.1", 0, "ec0d:9a03:008a:bcdf")}));
  EXPECT_EQ(r.changes.size(), 2u);
  EXPECT_TRUE(r.diagnostics.empty()) << r.Messages();
}

}  // namespace
}  // namespace provisioner

namespace provisioner {
namespace {

// Issue 28 item 3: each vfGroup's VFs get the group's vfVlan, vfRate and
// vfLinkState (its own, else the nic's), VFs in no group the nic's: one
// change per (PF, setting, range), the field path of whoever set the value.
TEST(VfGroupSettingsPlanTest, EachGroupItsOwnValueVfsInNoGroupTheNics) {
  DesiredState d;
  d.nics.push_back(Nic(8));
  NicSpec& nic = d.nics[0];
  nic.vf_vlan = VfVlanSpec{100, 0, "802.1Q"};
  nic.vf_link_state = "auto";
  VfGroupSpec a = testing::VfGroup(0, 3, "netdevice");
  a.vf_vlan = VfVlanSpec{200, 5, "802.1ad"};
  a.vf_rate = VfRateSpec{0, 10000};
  VfGroupSpec b = testing::VfGroup(6, 7, "netdevice");  // inherits the nic's VLAN and link state
  b.vf_link_state = "enable";
  nic.vf_groups = {b, a};  // not in range order
  PciFunction pf = Pf(kPf, 8);
  pf.driver = "ice";  // 802.1ad: mlx5 refuses it (VfVlanPlanTest.Mlx5RefusesEightOhTwoDotOneAd)
  for (VfInfo& vf : pf.sriov->vfs) vf.driver = VfNetdeviceDriver(pf.driver);
  Result r = PlanOf(d, Facts({pf}));
  std::map<std::string, const Change*> by_id;
  for (const Change& c : r.changes) by_id[c.id] = &c;
  auto vlan = [](int id, int qos, const char* proto) {
    return nlohmann::json{{"id", id}, {"qos", qos}, {"proto", proto}};
  };
  ASSERT_EQ(by_id.count("vf/0000:af:00.0/vlan#0-3"), 1u) << r.Messages();
  EXPECT_EQ(by_id["vf/0000:af:00.0/vlan#0-3"]->after, vlan(200, 5, "802.1ad"));
  EXPECT_EQ(by_id["vf/0000:af:00.0/vlan#0-3"]->field_path, "spec.nics[0].vfGroups[1].vfVlan");
  ASSERT_EQ(by_id.count("vf/0000:af:00.0/vlan#4-5"), 1u);  // in no group: the nic's
  EXPECT_EQ(by_id["vf/0000:af:00.0/vlan#4-5"]->after, vlan(100, 0, "802.1Q"));
  EXPECT_EQ(by_id["vf/0000:af:00.0/vlan#4-5"]->field_path, "spec.nics[0].vfVlan");
  ASSERT_EQ(by_id.count("vf/0000:af:00.0/vlan#6-7"), 1u);  // inherited
  EXPECT_EQ(by_id["vf/0000:af:00.0/vlan#6-7"]->after, vlan(100, 0, "802.1Q"));
  EXPECT_EQ(by_id["vf/0000:af:00.0/vlan#6-7"]->field_path, "spec.nics[0].vfVlan");
  EXPECT_EQ(by_id["vf/0000:af:00.0/vlan#6-7"]->detail["first"], 6);
  ASSERT_EQ(by_id.count("vf/0000:af:00.0/rate#0-3"), 1u);  // only group a sets a rate
  EXPECT_EQ(by_id.count("vf/0000:af:00.0/rate#4-5"), 0u);
  EXPECT_EQ(by_id.count("vf/0000:af:00.0/rate#6-7"), 0u);
  EXPECT_EQ(by_id.count("vf/0000:af:00.0/rate"), 0u);
  EXPECT_EQ(by_id["vf/0000:af:00.0/linkState#0-3"]->after, "auto");
  EXPECT_EQ(by_id["vf/0000:af:00.0/linkState#4-5"]->after, "auto");
  EXPECT_EQ(by_id["vf/0000:af:00.0/linkState#6-7"]->after, "enable");
  EXPECT_EQ(by_id["vf/0000:af:00.0/linkState#6-7"]->field_path,
            "spec.nics[0].vfGroups[0].vfLinkState");
  EXPECT_NE(by_id["vf/0000:af:00.0/vlan#0-3"]->reason.find("VFs 0-3 VLAN"), std::string::npos)
      << by_id["vf/0000:af:00.0/vlan#0-3"]->reason;

  // Converged: every VF as its range asks, nothing planned.
  for (int n = 0; n < 8; ++n) {
    VfInfo& vf = pf.sriov->vfs[static_cast<size_t>(n)];
    const bool in_a = n <= 3;
    vf.vlan_id = in_a ? 200 : 100;
    vf.vlan_qos = in_a ? 5 : 0;
    vf.vlan_proto = in_a ? "802.1ad" : "802.1Q";
    vf.min_tx_rate = 0;
    vf.max_tx_rate = in_a ? 10000 : 0;
    vf.link_state = n >= 6 ? "enable" : "auto";
  }
  r = PlanOf(d, Facts({pf}));
  EXPECT_TRUE(r.changes.empty()) << r.changes.front().id;
  // One VF of group b drifts: only its range is planned again.
  pf.sriov->vfs[7].vlan_id = 300;
  r = PlanOf(d, Facts({pf}));
  ASSERT_THAT(r.changes, ElementsAre(Changed("vf/0000:af:00.0/vlan#6-7")));
  EXPECT_EQ(r.changes[0].before[1], vlan(300, 0, "802.1Q"));
}

}  // namespace
}  // namespace provisioner
