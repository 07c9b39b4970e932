#include "modules/link/link_planner.h"

#include "gtest/gtest.h"

namespace provisioner {
namespace {

PciFunction Pf(const std::string& bdf, const std::string& netdev) {
  PciFunction f;
  f.pci_address = bdf;
  f.vendor = "15b3";
  f.device_id = "1017";
  f.class_code = 0x020000;
  f.netdevs = {netdev};
  return f;
}

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

std::vector<Change> Changes(const DesiredState& d, const HostFacts& f,
                            std::vector<Diagnostic>* diags = nullptr) {
  PlanSink sink;
  PlanLinks(d, f, sink);
  if (diags) *diags = sink.diagnostics();
  return sink.changes();
}

TEST(LinkPlanner, MtuAndUp) {
  HostFacts f;
  f.pci = {Pf("0000:af:00.0", "ens6f0np0")};
  f.links["ens6f0np0"] = Link("ens6f0np0", 1500, false);
  DesiredState d;
  d.nics = {Nic("ens6f0np0")};
  d.nics[0].mtu = 9000;
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
  HostFacts f;
  f.pci = {Pf("0000:af:00.0", "ens6f0np0")};
  f.links["ens6f0np0"] = Link("ens6f0np0", 1500, false);
  DesiredState d;
  d.nics = {Nic("ens6f0np0")};
  d.nics[0].link_type = "eth";  // nothing about the link itself
  EXPECT_TRUE(Changes(d, f).empty());
}

TEST(LinkPlanner, MtuOutsideTheNetdevRangeIsAnError) {
  HostFacts f;
  f.pci = {Pf("0000:af:00.0", "ens6f0np0")};
  LinkFacts l = Link("ens6f0np0", 1500, true);
  l.min_mtu = 68;
  l.max_mtu = 9978;
  f.links["ens6f0np0"] = l;
  DesiredState d;
  d.nics = {Nic("ens6f0np0")};
  d.nics[0].mtu = 10000;
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
  PciFunction pf = Pf("0000:03:00.0", "");
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
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].severity, Severity::kError);
  EXPECT_EQ(diags[0].path, "spec.nics[0].mtu");
  EXPECT_EQ(diags[0].message,
            "0000:03:00.0 has no network interface (no net/ in its sysfs directory, driver "
            "mlx5_core); its mtu cannot be set or checked");
  f.pci[0].driver.clear();
  Changes(d, f, &diags);
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_NE(diags[0].message.find("no driver bound: load its driver first"), std::string::npos);
}

TEST(LinkPlanner, NetdeviceVfsUpPlannedFromDesiredAndFacts) {
  HostFacts f;
  PciFunction pf = Pf("0000:af:00.0", "ens6f0np0");
  pf.sriov = SriovInfo{};
  pf.sriov->total_vfs = 8;
  f.pci = {pf};
  f.links["ens6f0np0"] = Link("ens6f0np0", 1500, true);
  DesiredState d;
  d.nics = {Nic("ens6f0np0")};
  d.nics[0].num_vfs = 2;
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

}  // namespace
}  // namespace provisioner
