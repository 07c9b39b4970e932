#include "modules/link/link_planner.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/support/fake_pci_module.h"
#include "test/support/planned_changes.h"
#include "test/support/vf_group.h"

namespace provisioner {
namespace {

LinkFacts Link(const std::string& name, int mtu, bool up) {
  LinkFacts l;
  l.name = name;
  l.mtu = mtu;
  l.admin_up = up;
  return l;
}

NicSpec Nic(const std::string& pf_name) {
  NicSpec n;
  n.name = "nic0";
  n.selector.pf_names = {pf_name};
  return n;
}

// nic0 on ens6f0np0 with `num_vfs` VFs, `mtu` and `vf_mtu` (unset: nullopt).
DesiredState Wants(std::optional<int> num_vfs, std::optional<int> mtu,
                   std::optional<int> vf_mtu = std::nullopt) {
  DesiredState d;
  d.nics = {Nic("ens6f0np0")};
  d.nics[0].num_vfs = num_vfs;
  d.nics[0].mtu = mtu;
  d.nics[0].vf_mtu = vf_mtu;
  return d;
}

// 0000:af:00.0 without SR-IOV, its netdev ens6f0np0 at `mtu`, up or down.
HostFacts PfHost(int mtu, bool up) {
  HostFacts f;
  f.pci = {testing::NetworkPf("0000:af:00.0", "ens6f0np0")};
  f.links["ens6f0np0"] = Link("ens6f0np0", mtu, up);
  return f;
}

constexpr testing::PlannerOf<PlanLinks> Changes{};

TEST(LinkPlanner, MtuAndUp) {
  HostFacts f = PfHost(1500, false);
  DesiredState d = Wants(std::nullopt, 9000);
  std::vector<Change> c = Changes(d, f);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].id, "link/ens6f0np0/mtu");
  EXPECT_EQ(c[0].before, 1500);
  EXPECT_EQ(c[0].after, 9000);
  EXPECT_EQ(c[0].phase, kPhaseLinks);
  EXPECT_EQ(c[0].field_path, "spec.nics[0].mtu");
  EXPECT_EQ(c[1].id, "link/ens6f0np0/up");
  EXPECT_EQ(c[1].after, true);
  // Matching host: nothing.
  f.links["ens6f0np0"] = Link("ens6f0np0", 9000, true);
  EXPECT_TRUE(Changes(d, f).empty());
}

TEST(LinkPlanner, UnmanagedLinksAreLeftAlone) {
  DesiredState d = Wants(std::nullopt, std::nullopt);
  d.nics[0].link_type = "eth";  // nothing about the link itself
  EXPECT_TRUE(Changes(d, PfHost(1500, false)).empty());
}

TEST(LinkPlanner, MtuOutsideTheNetdevRangeIsAnError) {
  HostFacts f = PfHost(1500, true);
  f.links["ens6f0np0"].min_mtu = 68;
  f.links["ens6f0np0"].max_mtu = 9978;
  DesiredState d = Wants(std::nullopt, 10000);
  std::vector<Diagnostic> diags;
  EXPECT_TRUE(Changes(d, f, &diags).empty());
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].path, "spec.nics[0].mtu");
  EXPECT_NE(diags[0].message.find("68..9978"), std::string::npos) << diags[0].message;
  d.nics[0].mtu = 60;
  EXPECT_TRUE(Changes(d, f, &diags).empty());
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_NE(diags[0].message.find("minimum"), std::string::npos);
}

// A ConnectX-4 without net/ (a capture, or a driver that made no netdev):
// an mtu there is an error, not an empty plan that reads as converged.
TEST(LinkPlanner, MtuOnAPfWithoutNetdevIsAnError) {
  HostFacts f;
  PciFunction pf = testing::NetworkPf("0000:03:00.0", "");
  pf.netdevs.clear();
  pf.device_id = "1013";
  pf.driver = "mlx5_core";
  f.pci = {pf};
  DesiredState d;
  d.nics = {Nic("")};
  d.nics[0].selector.pf_names.clear();
  d.nics[0].selector.root_devices = {"0000:03:00.0"};
  d.nics[0].mtu = 4092;
  std::vector<Diagnostic> diags;
  EXPECT_TRUE(Changes(d, f, &diags).empty());
  using ::testing::ElementsAre;
  using ::testing::Field;
  EXPECT_THAT(diags, ElementsAre(::testing::AllOf(
                         testing::Diag("spec.nics[0].mtu",
                                       "0000:03:00.0 has no network interface (no net/ in its "
                                       "sysfs directory, driver mlx5_core); its mtu cannot be set "
                                       "or checked"),
                         Field(&Diagnostic::severity, Severity::kError))));
  f.pci[0].driver.clear();
  Changes(d, f, &diags);
  EXPECT_THAT(diags,
              ElementsAre(Field(&Diagnostic::message,
                                ::testing::HasSubstr("no driver bound: load its driver first"))));
}

TEST(LinkPlanner, NetdeviceVfsUpPlannedFromDesiredAndFacts) {
  HostFacts f;
  PciFunction pf = testing::NetworkPf("0000:af:00.0", "ens6f0np0");
  pf.sriov = SriovInfo{};
  pf.sriov->total_vfs = 8;
  f.pci = {pf};
  f.links["ens6f0np0"] = Link("ens6f0np0", 1500, true);
  DesiredState d = Wants(2, std::nullopt);
  d.nics[0].device_type = "netdevice";
  // VFs not there yet: planned with an unknown before, resolved at apply.
  std::vector<Change> c = Changes(d, f);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].id, "link/0000:af:00.0/vfsUp");
  EXPECT_TRUE(c[0].before.is_null());
  // VFs there, one down.
  f.pci[0].sriov->num_vfs = 2;
  VfInfo v0, v1;
  v0.vf_index = 0;
  v0.netdevs = {"ens6f0v0"};
  v1.vf_index = 1;
  v1.netdevs = {"ens6f0v1"};
  f.pci[0].sriov->vfs = {v0, v1};
  f.links["ens6f0v0"] = Link("ens6f0v0", 1500, true);
  f.links["ens6f0v1"] = Link("ens6f0v1", 1500, false);
  c = Changes(d, f);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].before, false);
  // All up: nothing. vfio-pci: never.
  f.links["ens6f0v1"].admin_up = true;
  EXPECT_TRUE(Changes(d, f).empty());
  f.links["ens6f0v1"].admin_up = false;
  d.nics[0].device_type = "vfio-pci";
  EXPECT_TRUE(Changes(d, f).empty());
}

// A PF with `n` VFs bound to mlx5_core, each with netdev ens6f0v<i> at `mtu`.
HostFacts VfHost(int n, int vf_mtu, int pf_mtu = 9000) {
  HostFacts f;
  PciFunction pf = testing::NetworkPf("0000:af:00.0", "ens6f0np0");
  pf.driver = "mlx5_core";
  pf.sriov = SriovInfo{};
  pf.sriov->total_vfs = 8;
  pf.sriov->num_vfs = n;
  f.links["ens6f0np0"] = Link("ens6f0np0", pf_mtu, true);
  for (int i = 0; i < n; ++i) {
    VfInfo v;
    v.vf_index = i;
    v.driver = "mlx5_core";
    v.netdevs = {"ens6f0v" + std::to_string(i)};
    pf.sriov->vfs.push_back(v);
    f.links[v.netdevs[0]] = Link(v.netdevs[0], vf_mtu, true);
  }
  f.pci = {pf};
  return f;
}

std::vector<Change> Only(const std::vector<Change>& all, const std::string& attribute) {
  std::vector<Change> out;
  for (const Change& c : all) {
    if (c.attribute == attribute) out.push_back(c);
  }
  return out;
}

TEST(LinkPlanner, VfMtuPlannedAfterThePfMtuFromDesiredAndFacts) {
  DesiredState d = Wants(4, 9000, 9000);
  // VFs made by this plan, PF at 1500: PF mtu first, then the VFs', before unknown.
  HostFacts f = VfHost(0, 1500, 1500);
  std::vector<Change> c = Changes(d, f);
  ASSERT_GE(c.size(), 2u);
  EXPECT_EQ(c[0].id, "link/ens6f0np0/mtu");
  std::vector<Change> v = Only(c, kVfMtuAttribute);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].id, "link/0000:af:00.0/vfMtu");
  EXPECT_TRUE(v[0].before.is_null());
  EXPECT_EQ(v[0].after, 9000);
  EXPECT_EQ(v[0].phase, kPhaseLinks);
  EXPECT_EQ(v[0].field_path, "spec.nics[0].vfMtu");
  EXPECT_EQ(v[0].detail["first"], 0);
  EXPECT_EQ(v[0].detail["last"], 3);
  // VFs there at 1500: each one's MTU before.
  f = VfHost(4, 1500);
  v = Only(Changes(d, f), kVfMtuAttribute);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].before, nlohmann::json({1500, 1500, 1500, 1500}));
  // One VF left behind: planned, with the others' values.
  f = VfHost(4, 9000);
  f.links["ens6f0v2"].mtu = 1500;
  v = Only(Changes(d, f), kVfMtuAttribute);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].before, nlohmann::json({9000, 9000, 1500, 9000}));
  // Converged: nothing.
  f = VfHost(4, 9000);
  EXPECT_TRUE(Only(Changes(d, f), kVfMtuAttribute).empty());
  // Converged, but deviceType netdevice rebinds a VF now on vfio-pci (a new
  // netdev starts at 1500): planned.
  f.pci[0].sriov->vfs[1].driver = "vfio-pci";
  d.nics[0].device_type = "netdevice";
  v = Only(Changes(d, f), kVfMtuAttribute);
  ASSERT_EQ(v.size(), 1u);
}

TEST(LinkPlanner, VfMtuAboveThePfOrTheVfMaximumIsAnError) {
  DesiredState d = Wants(4, std::nullopt, 9000);
  // No nic mtu: the PF's current one bounds it.
  HostFacts f = VfHost(4, 1500, 1500);
  std::vector<Diagnostic> diags;
  EXPECT_TRUE(Only(Changes(d, f, &diags), kVfMtuAttribute).empty());
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].path, "spec.nics[0].vfMtu");
  EXPECT_EQ(diags[0].message,
            "9000 is above the MTU of the PF ens6f0np0 (0000:af:00.0), 1500: a VF cannot carry "
            "frames its PF's port does not; set the nic's mtu to 9000 or more");
  // A VF's IFLA_MAX_MTU (netlink discovery) below it.
  f = VfHost(4, 1500, 9000);
  f.links["ens6f0v3"].max_mtu = 4000;
  EXPECT_TRUE(Only(Changes(d, f, &diags), kVfMtuAttribute).empty());
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].message,
            "9000 is above the largest MTU of ens6f0v3 (VF 3 of 0000:af:00.0), 4000");
}

TEST(LinkPlanner, VfMtuForPartOfTheVfs) {
  // What a VF group calls: VFs 2-3 only.
  HostFacts f = VfHost(4, 1500);
  VfMtuRequest req;
  req.mtu = 4000;
  req.range = {2, 3};
  req.count = 4;
  req.nic = "nic0";
  req.field_path = "spec.nics[0].vfGroups[1].vfMtu";
  PlanSink sink;
  PlanVfMtu(f.pci[0], req, f, sink);
  ASSERT_EQ(sink.changes().size(), 1u);
  const Change& c = sink.changes()[0];
  EXPECT_EQ(c.id, "link/0000:af:00.0/vfMtu#2-3");
  EXPECT_EQ(c.before, nlohmann::json({1500, 1500}));
  EXPECT_EQ(c.detail["first"], 2);
  EXPECT_EQ(c.detail["last"], 3);
  // A range past the VFs.
  req.range = {2, 5};
  PlanSink bad;
  PlanVfMtu(f.pci[0], req, f, bad);
  EXPECT_TRUE(bad.changes().empty());
  ASSERT_EQ(bad.diagnostics().size(), 1u);
  EXPECT_EQ(bad.diagnostics()[0].message, "VFs 2-5 are not VFs of 0000:af:00.0 (it will have 4)");
}

// Issue 28 item 3: each group's VFs get its vfMtu (its own, else the nic's),
// VFs in no group the nic's; a vfio-pci group has no netdev and gets none of
// the nic's.
TEST(LinkPlanner, VfMtuPerGroup) {
  DesiredState d = Wants(8, 9000, 4000);
  d.nics[0].device_type = "netdevice";
  VfGroupSpec jumbo = testing::VfGroup(0, 1, std::nullopt);
  jumbo.vf_mtu = 9000;
  VfGroupSpec inherits = testing::VfGroup(2, 3, std::nullopt);
  VfGroupSpec vms = testing::VfGroup(6, 7, "vfio-pci");
  d.nics[0].vf_groups = {vms, jumbo, inherits};
  HostFacts f = VfHost(8, 1500);
  for (int n = 6; n < 8; ++n) f.pci[0].sriov->vfs[static_cast<size_t>(n)].driver = "vfio-pci";
  std::vector<Change> v = Only(Changes(d, f), kVfMtuAttribute);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].id, "link/0000:af:00.0/vfMtu#0-1");
  EXPECT_EQ(v[0].after, 9000);
  EXPECT_EQ(v[0].field_path, "spec.nics[0].vfGroups[1].vfMtu");
  EXPECT_EQ(v[1].id, "link/0000:af:00.0/vfMtu#2-3");
  EXPECT_EQ(v[1].after, 4000);
  EXPECT_EQ(v[1].field_path, "spec.nics[0].vfMtu");
  EXPECT_EQ(v[2].id, "link/0000:af:00.0/vfMtu#4-5");  // in no group
  EXPECT_EQ(v[2].after, 4000);
  EXPECT_NE(v[0].reason.find("VFs 0-1"), std::string::npos) << v[0].reason;
  // Converged: nothing.
  for (int n = 0; n < 6; ++n) f.links["ens6f0v" + std::to_string(n)].mtu = n < 2 ? 9000 : 4000;
  EXPECT_TRUE(Only(Changes(d, f), kVfMtuAttribute).empty());
}

// Issue 28 item 3 / the link planner's deviceType: VF netdevs are brought up
// per group, where the VFs' deviceType (their group's, else the nic's) is
// netdevice: a netdevice group of a vfio-pci nic is, a vfio-pci group of a
// netdevice nic is not. Adjacent netdevice ranges are one change.
TEST(LinkPlanner, VfsUpPerGroupDeviceType) {
  HostFacts f = VfHost(8, 1500);
  for (int n = 0; n < 8; ++n) f.links["ens6f0v" + std::to_string(n)].admin_up = false;
  DesiredState d = Wants(8, std::nullopt);
  d.nics[0].device_type = "vfio-pci";
  d.nics[0].vf_groups = {testing::VfGroup(2, 3, "netdevice"), testing::VfGroup(4, 5, "netdevice")};
  std::vector<Change> up = Only(Changes(d, f), kVfsUpAttribute);
  ASSERT_EQ(up.size(), 1u);
  EXPECT_EQ(up[0].id, "link/0000:af:00.0/vfsUp#2-5");
  EXPECT_EQ(up[0].before, false);
  EXPECT_EQ(up[0].detail["first"], 2);
  EXPECT_EQ(up[0].detail["last"], 5);
  EXPECT_EQ(up[0].field_path, "spec.nics[0].vfGroups[0].deviceType");
  // Those up (the vfio-pci ones' state does not count): nothing.
  for (int n = 2; n < 6; ++n) f.links["ens6f0v" + std::to_string(n)].admin_up = true;
  EXPECT_TRUE(Only(Changes(d, f), kVfsUpAttribute).empty());
  // A nic without deviceType and one netdevice group: only that group.
  d.nics[0].device_type.reset();
  d.nics[0].vf_groups = {testing::VfGroup(6, 7, "netdevice")};
  up = Only(Changes(d, f), kVfsUpAttribute);
  ASSERT_EQ(up.size(), 1u);
  EXPECT_EQ(up[0].id, "link/0000:af:00.0/vfsUp#6-7");
  // A netdevice nic with a vfio-pci group in the middle: two runs.
  d.nics[0].device_type = "netdevice";
  d.nics[0].vf_groups = {testing::VfGroup(2, 5, "vfio-pci")};
  up = Only(Changes(d, f), kVfsUpAttribute);
  ASSERT_EQ(up.size(), 2u);
  EXPECT_EQ(up[0].id, "link/0000:af:00.0/vfsUp#0-1");
  EXPECT_EQ(up[0].field_path, "spec.nics[0].deviceType");
  EXPECT_EQ(up[1].id, "link/0000:af:00.0/vfsUp#6-7");
  // Every VF netdevice: the whole PF's change, as without groups.
  d.nics[0].vf_groups = {testing::VfGroup(2, 5, "netdevice")};
  up = Only(Changes(d, f), kVfsUpAttribute);
  ASSERT_EQ(up.size(), 1u);
  EXPECT_EQ(up[0].id, "link/0000:af:00.0/vfsUp");
  EXPECT_FALSE(up[0].detail.contains("first"));
}

}  // namespace
}  // namespace provisioner
