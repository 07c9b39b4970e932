#include "engine/model/host_model.h"
#include "engine/model/selector.h"
#include "engine/model/source_mark.h"

#include "gtest/gtest.h"

namespace provisioner {
namespace {

PciFunction Pf(std::string addr, std::string vendor, std::string dev, std::string netdev) {
  PciFunction f;
  f.pci_address = std::move(addr);
  f.vendor = std::move(vendor);
  f.device_id = std::move(dev);
  f.class_code = 0x020000;
  f.netdevs = {std::move(netdev)};
  f.sriov = SriovInfo{};
  return f;
}

HostFacts TwoPortHost() {
  HostFacts h;
  h.pci.push_back(Pf("0000:af:00.0", "15b3", "1017", "ens6f0np0"));
  h.pci.push_back(Pf("0000:af:00.1", "15b3", "1017", "ens6f1np1"));
  PciFunction vf = Pf("0000:af:00.2", "15b3", "1018", "ens6f0v0");
  vf.physfn = "0000:af:00.0";
  h.pci.push_back(vf);
  PciFunction gpu;
  gpu.pci_address = "0000:18:00.0";
  gpu.vendor = "10de";
  gpu.class_code = 0x030200;
  h.pci.push_back(gpu);
  return h;
}

TEST(SelectorTest, AllGivenFieldsMustMatch) {
  HostFacts h = TwoPortHost();
  NicSpec nic;
  nic.selector.vendor = "15B3";
  EXPECT_EQ(SelectPfs(nic, h).size(), 2u);  // VF and GPU never selected
  nic.selector.pf_names = {"ens6f1np1"};
  auto m = SelectPfs(nic, h);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0]->pci_address, "0000:af:00.1");
  nic.selector.device_id = "101d";
  EXPECT_TRUE(SelectPfs(nic, h).empty());
}

TEST(SelectorTest, RootDevicesAcceptShortAddress) {
  HostFacts h = TwoPortHost();
  NicSpec nic;
  nic.selector.root_devices = {"af:00.0"};
  auto m = SelectPfs(nic, h);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0]->pci_address, "0000:af:00.0");
  nic.selector.root_devices = {"0000:AF:00.1"};
  ASSERT_EQ(SelectPfs(nic, h).size(), 1u);
}

TEST(SelectorTest, CanonicalPciAddressIsFullAndLowerCase) {
  EXPECT_EQ(CanonicalPciAddress("AF:00.0"), "0000:af:00.0");
  EXPECT_EQ(CanonicalPciAddress("0000:Af:00.1"), "0000:af:00.1");
  EXPECT_EQ(CanonicalPciAddress("10000:E1:00.0"), "10000:e1:00.0");  // VMD domain
  // No address: the text as it is (it then matches no PF).
  EXPECT_EQ(CanonicalPciAddress("AF:00.8"), "AF:00.8");
  EXPECT_EQ(CanonicalPciAddress(""), "");
}

TEST(HostModelTest, NicsAreNetworkPfsWithSriovOrRdma) {
  HostFacts h = TwoPortHost();
  h.pci[1].sriov.reset();
  h.pci[1].vendor = "8086";  // a plain Ethernet function: not a NIC here
  h.pci[1].driver = "igb";
  EXPECT_EQ(h.Nics().size(), 1u);
  EXPECT_FALSE(h.pci[1].IsRdmaCapable());
  h.pci[1].rdma_devices = {"mlx5_1"};
  EXPECT_EQ(h.Nics().size(), 2u);
  EXPECT_FALSE(h.pci[1].RdmaDevicePending());
  // RDMA capable before its RDMA device exists (mlx5_ib not loaded yet): by
  // vendor, by core driver, by InfiniBand class.
  h.pci[1].rdma_devices.clear();
  h.pci[1].vendor = "15b3";
  EXPECT_TRUE(h.pci[1].RdmaDevicePending());
  EXPECT_EQ(h.Nics().size(), 2u);
  h.pci[1].vendor = "8086";
  h.pci[1].driver = "mlx5_core";
  EXPECT_TRUE(h.pci[1].IsRdmaCapable());
  h.pci[1].driver = "ib_qib";
  h.pci[1].class_code = 0x0c0600;  // InfiniBand controller (serial bus class)
  EXPECT_TRUE(h.pci[1].IsNetwork());
  EXPECT_TRUE(h.pci[1].IsRdmaCapable());
  h.pci[1].class_code = 0x0c0300;  // USB: not a network function
  EXPECT_FALSE(h.pci[1].IsNetwork());
  EXPECT_NE(h.FindPci("0000:af:00.2"), nullptr);
  EXPECT_EQ(h.FindPci("0000:00:00.0"), nullptr);
}

TEST(MarkIndexTest, FindsNearestAncestorAndFormats) {
  MarkIndex m;
  m.Set("spec.nics[0]", {12, 7});
  m.Set("spec.nics[0].numVfs", {14, 15});
  EXPECT_EQ(m.Find("spec.nics[0].numVfs").line, 14);
  EXPECT_EQ(m.Find("spec.nics[0].mtu").line, 12);
  Diagnostic d{Severity::kError, "spec.nics[0].numVfs", "300 exceeds sriov_totalvfs 127"};
  EXPECT_EQ(FormatDiagnostic("host.yaml", m, d),
            "host.yaml:14:15: spec.nics[0].numVfs: 300 exceeds sriov_totalvfs 127");
  EXPECT_EQ(FormatDiagnostic("h.yaml", MarkIndex(), {Severity::kError, "", "empty"}),
            "h.yaml: empty");
}

}  // namespace
}  // namespace provisioner
