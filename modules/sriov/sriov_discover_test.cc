// SR-IOV discovery on kernel-shaped trees (pci discovery first, as the engine
// runs it).
#include <memory>
#include <string>

#include "engine/host/host_fs.h"
#include "gtest/gtest.h"
#include "modules/pci/pci_module.h"
#include "modules/pci/testing/sysfs_tree.h"
#include "modules/sriov/sriov_module.h"
#include "modules/sriov/testing/discover.h"
#include "test/support/ttar.h"

namespace provisioner {
namespace {

using sysfs_testing::FunctionSpec;
using sysfs_testing::SysfsTree;

using sriov_testing::DiscoverPciAndSriov;

std::string VfAddress(int i) {
  // 0000:af:00.2, .3, ... .7, 0000:af:01.0, ...
  int devfn = 2 + i;
  char buf[32];
  std::snprintf(buf, sizeof buf, "0000:af:%02x.%d", devfn >> 3, devfn & 7);
  return buf;
}

class SriovDiscoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::MakeTempDir("sriov");
    ASSERT_FALSE(root_.empty());
    tree_ = std::make_unique<SysfsTree>(root_);
    tree_->AddFunction(
        FunctionSpec::At("0000:af:00.0").Driver("mlx5_core").Net("ens6f0np0").Rdma("mlx5_0"));
    tree_->AddFunction(
        FunctionSpec::At("0000:3b:00.0").Ids("8086", "1521").Driver("igb").Net("eno1"));
  }

  std::string root_;
  std::unique_ptr<SysfsTree> tree_;
};

TEST_F(SriovDiscoverTest, PfWithoutSriovFilesHasNoSriov) {
  auto facts = DiscoverPciAndSriov(root_);
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  EXPECT_FALSE(facts->FindPci("0000:3b:00.0")->sriov.has_value());
  EXPECT_FALSE(facts->FindPci("0000:af:00.0")->sriov.has_value());
}

TEST_F(SriovDiscoverTest, SriovFactsAndVfsInIndexOrder) {
  tree_->AddSriov("0000:af:00.0", 16);
  // 12 VFs: virtfn10 and virtfn11 sort before virtfn2 as names.
  for (int i = 0; i < 12; ++i) {
    FunctionSpec vf = FunctionSpec::At(VfAddress(i)).Ids("15b3", "1018").Driver("mlx5_core");
    if (i != 5) vf.Net("ens6f0v" + std::to_string(i));
    if (i == 0) vf.Rdma("mlx5_2");
    if (i == 5) vf.Driver("vfio-pci");
    tree_->AddVf("0000:af:00.0", i, vf);
  }
  auto facts = DiscoverPciAndSriov(root_);
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  const PciFunction* pf = facts->FindPci("0000:af:00.0");
  ASSERT_TRUE(pf->sriov.has_value());
  const SriovInfo& s = *pf->sriov;
  EXPECT_EQ(s.total_vfs, 16);
  EXPECT_EQ(s.num_vfs, 12);
  EXPECT_EQ(s.offset, 2);
  EXPECT_EQ(s.stride, 1);
  EXPECT_EQ(s.vf_device, "1018");
  EXPECT_EQ(s.drivers_autoprobe, true);
  ASSERT_EQ(s.vfs.size(), 12u);
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(s.vfs[i].vf_index, i);
    EXPECT_EQ(s.vfs[i].pci_address, VfAddress(i));
  }
  EXPECT_EQ(s.vfs[0].driver, "mlx5_core");
  EXPECT_EQ(s.vfs[0].netdevs, std::vector<std::string>{"ens6f0v0"});
  EXPECT_EQ(s.vfs[0].rdma_devices, std::vector<std::string>{"mlx5_2"});
  EXPECT_EQ(s.vfs[5].driver, "vfio-pci");
  EXPECT_TRUE(s.vfs[5].netdevs.empty());
  EXPECT_EQ(s.vfs[11].netdevs, std::vector<std::string>{"ens6f0v11"});
  // VFs are PCI functions too, and never Nics().
  EXPECT_EQ(facts->FindPci(VfAddress(11))->vf_index, 11);
  ASSERT_EQ(facts->Nics().size(), 1u);
  EXPECT_EQ(facts->Nics()[0]->pci_address, "0000:af:00.0");
}

TEST_F(SriovDiscoverTest, OptionalSriovFilesMayBeMissing) {
  tree_->AddSriov("0000:af:00.0", 8);
  std::string dev = tree_->DevicePath("0000:af:00.0");
  for (const char* f :
       {"sriov_offset", "sriov_stride", "sriov_vf_device", "sriov_drivers_autoprobe"}) {
    tree_->Remove(dev + "/" + f);
  }
  auto facts = DiscoverPciAndSriov(root_);
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  const SriovInfo& s = *facts->FindPci("0000:af:00.0")->sriov;
  EXPECT_EQ(s.total_vfs, 8);
  EXPECT_FALSE(s.offset.has_value());
  EXPECT_FALSE(s.drivers_autoprobe.has_value());
  EXPECT_EQ(s.vf_device, "");
}

// A value the kernel cannot show: a warning on that function naming the
// path; its SR-IOV facts are left out, the rest of the host discovered.
TEST_F(SriovDiscoverTest, GarbageTotalIsAWarningNamingThePath) {
  tree_->AddSriov("0000:af:00.0", 8);
  tree_->WriteFile(tree_->DevicePath("0000:af:00.0") + "/sriov_totalvfs", "lots\n");
  auto facts = DiscoverPciAndSriov(root_);
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  ASSERT_EQ(facts->warnings.size(), 1u);
  EXPECT_NE(facts->warnings[0].find("/sys/bus/pci/devices/0000:af:00.0/sriov_totalvfs reads "
                                    "\"lots\""),
            std::string::npos)
      << facts->warnings[0];
  const PciFunction* pf = facts->FindPci("0000:af:00.0");
  ASSERT_NE(pf, nullptr);
  EXPECT_FALSE(pf->sriov.has_value());
}

// prometheus/procfs fixture (derived from a real host): Intel E810 PF.
TEST(SriovDiscoverCapturedTest, ProcfsFixtureE810) {
  std::string root = testing::MakeTempDir("procfs");
  ASSERT_TRUE(testing::ExtractTtar(
                  testing::RunfilePath("test/support/testdata/fixtures-sys-subset.ttar"), root, 1)
                  .ok());
  auto facts = DiscoverPciAndSriov(root);
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  const PciFunction* e810 = facts->FindPci("0000:a2:00.0");
  ASSERT_NE(e810, nullptr);
  ASSERT_TRUE(e810->sriov.has_value());
  EXPECT_EQ(e810->sriov->total_vfs, 128);
  EXPECT_EQ(e810->sriov->num_vfs, 0);
  EXPECT_EQ(e810->sriov->offset, 8);
  EXPECT_EQ(e810->sriov->stride, 1);
  EXPECT_EQ(e810->sriov->vf_device, "1889");
  EXPECT_TRUE(e810->sriov->vfs.empty());
  ASSERT_EQ(facts->Nics().size(), 1u);
}

}  // namespace
}  // namespace provisioner
