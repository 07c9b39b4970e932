// Discovery of the checked-in host trees (test/hosts/*.ttar): what their
// generators (test/support/host_presets.h) and captures describe.
#include <filesystem>
#include <string>

#include "engine/host/host_fs.h"
#include "gtest/gtest.h"
#include "modules/pci/pci_module.h"
#include "modules/sriov/sriov_module.h"
#include "modules/sriov/testing/discover.h"
#include "test/support/ttar.h"

namespace provisioner {
namespace {

constexpr char kPf[] = "0000:af:00.0";

// The checked-in trees (test/hosts) discover as their generators describe.
StatusOr<HostFacts> DiscoverTree(const std::string& name) {
  std::string root = testing::MakeTempDir(name);
  RETURN_IF_ERROR(testing::ExtractTtar(testing::HostTreePath(name), root));
  return sriov_testing::DiscoverPciAndSriov(root);
}

TEST(SriovHostTreesTest, Cx5RoceVfs) {
  auto facts = DiscoverTree("cx5-roce-vfs");
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  const PciFunction* pf = facts->FindPci(kPf);
  ASSERT_NE(pf, nullptr);
  ASSERT_TRUE(pf->sriov.has_value());
  EXPECT_EQ(pf->sriov->num_vfs, 4);
  ASSERT_EQ(pf->sriov->vfs.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    const VfInfo& vf = pf->sriov->vfs[i];
    EXPECT_EQ(vf.vf_index, i);
    const PciFunction* f = facts->FindPci(vf.pci_address);
    ASSERT_NE(f, nullptr) << vf.pci_address;
    EXPECT_EQ(f->physfn, kPf);
    EXPECT_EQ(f->vf_index, i);
  }
}

TEST(SriovHostTreesTest, Cx5Ib) {
  auto facts = DiscoverTree("cx5-ib");
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  const PciFunction* pf = facts->FindPci("0000:86:00.0");
  ASSERT_NE(pf, nullptr);
  EXPECT_EQ(pf->class_code, 0x020700u);
  EXPECT_EQ(pf->netdevs, std::vector<std::string>{"ibs5f0"});
  ASSERT_TRUE(pf->sriov.has_value());
  EXPECT_EQ(pf->sriov->total_vfs, 16);
}

// A real capture (ghw PR #230): two I350 PFs with 4 of 7 VFs each.
TEST(SriovHostTreesTest, I350Ghw) {
  auto facts = DiscoverTree("i350-sriov-ghw");
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  int pfs = 0;
  for (const PciFunction* nic : facts->Nics()) {
    if (nic->device_id != "1521") continue;
    ++pfs;
    ASSERT_TRUE(nic->sriov.has_value()) << nic->pci_address;
    EXPECT_EQ(nic->sriov->total_vfs, 7);
    EXPECT_EQ(nic->sriov->num_vfs, 4);
    EXPECT_EQ(nic->sriov->offset, 128);
    EXPECT_EQ(nic->sriov->stride, 4);
    EXPECT_EQ(nic->sriov->vf_device, "1520");
    ASSERT_EQ(nic->sriov->vfs.size(), 4u);
    EXPECT_EQ(nic->sriov->vfs[0].driver, "igbvf");
    EXPECT_EQ(nic->sriov->vfs[0].netdevs.size(), 1u);
  }
  EXPECT_EQ(pfs, 2);
  const PciFunction* vf = facts->FindPci("0000:05:10.0");
  ASSERT_NE(vf, nullptr);
  EXPECT_EQ(vf->physfn, "0000:05:00.0");
  EXPECT_EQ(vf->vf_index, 0);
  if (std::filesystem::exists(std::string(kPciIdsPath))) {
    EXPECT_EQ(vf->vendor_name, "Intel Corporation");  // the system's pci.ids
  }
}

}  // namespace
}  // namespace provisioner
