#include "modules/pci/pci_module.h"

#include <filesystem>
#include <memory>
#include <string>

#include "engine/host/host_fs.h"
#include "gtest/gtest.h"
#include "modules/pci/pci_ident_source.h"
#include "modules/pci/testing/sysfs_tree.h"
#include "test/support/ttar.h"

// Under --config=asan: when a tree is broken, libpci's fatal-error callback
// is left by longjmp (it must not return), so the scan's own allocations (its
// opendir() of devices/ among them) are never freed. That happens once, on
// the error path, inside libpci; our code closes every directory it opens.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libpci.so\nleak:__alloc_dir\n";
}

namespace provisioner {
namespace {

using sysfs_testing::FunctionSpec;
using sysfs_testing::SysfsTree;

constexpr char kPciIds[] =
    "# test pci.ids\n"
    "15b3  Mellanox Technologies\n"
    "\t1017  MT27800 Family [ConnectX-5]\n"
    "\t1018  MT27800 Family [ConnectX-5 Virtual Function]\n"
    "8086  Intel Corporation\n";

class PciDiscoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::MakeTempDir("pci");
    ASSERT_FALSE(root_.empty());
    tree_ = std::make_unique<SysfsTree>(root_);
  }

  // A dual-port ConnectX-5 behind a root port, the second port with two
  // VFs, an Intel function pci.ids names only by vendor, a VF bound to vfio-pci.
  void BuildHost() {
    tree_->AddFunction(FunctionSpec::At("0000:ae:00.0")
                           .Ids("8086", "2030")
                           .Class("060400")
                           .Driver("pcieport")
                           .Numa("1"));
    FunctionSpec p0 = FunctionSpec::At("0000:af:00.0")
                          .Driver("mlx5_core")
                          .Numa("1")
                          .Net("ens6f0np0")
                          .Rdma("mlx5_0")
                          .Parent("pci0000:ae/0000:ae:00.0");
    FunctionSpec p1 = p0;
    p1.address = "0000:af:00.1";
    p1.netdevs = {"ens6f1np1"};
    p1.rdma_devices = {"mlx5_1"};
    tree_->AddFunction(p1);
    tree_->AddFunction(p0);
    tree_->AddSriov("0000:af:00.1", 8);
    tree_->AddVf("0000:af:00.1", 0,
                 FunctionSpec::At("0000:af:01.2")
                     .Ids("15b3", "1018")
                     .Driver("mlx5_core")
                     .Net("ens6f1v0")
                     .Rdma("mlx5_2"));
    tree_->AddVf("0000:af:00.1", 1,
                 FunctionSpec::At("0000:af:01.3").Ids("15b3", "1018").Driver("vfio-pci"));
    tree_->WriteFile("/usr/share/misc/pci.ids", kPciIds);
    tree_->WriteFile("/proc/sys/kernel/osrelease", "6.1.0-27-amd64\n");
    tree_->WriteFile("/sys/kernel/iommu_groups/42/type", "DMA\n");
    tree_->Symlink(tree_->DevicePath("0000:af:01.3") + "/iommu_group",
                   "/sys/kernel/iommu_groups/42");
  }

  StatusOr<HostFacts> Discover() {
    fs_ = NewLocalHostFs(root_);
    HostContext ctx;
    ctx.fs = fs_.get();
    HostFacts facts;
    facts.root = root_;
    PciModule pci;
    Status s = pci.Discover(ctx, facts);
    if (!s.ok()) return s;
    return facts;
  }

  std::string root_;
  std::unique_ptr<SysfsTree> tree_;
  std::unique_ptr<HostFs> fs_;
};

TEST_F(PciDiscoverTest, EveryFunctionInAddressOrder) {
  BuildHost();
  auto facts = Discover();
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  ASSERT_EQ(facts->pci.size(), 5u);
  EXPECT_EQ(facts->pci[0].pci_address, "0000:ae:00.0");
  EXPECT_EQ(facts->pci[1].pci_address, "0000:af:00.0");
  EXPECT_EQ(facts->pci[2].pci_address, "0000:af:00.1");
  EXPECT_EQ(facts->pci[3].pci_address, "0000:af:01.2");
  EXPECT_EQ(facts->pci[4].pci_address, "0000:af:01.3");
  EXPECT_EQ(facts->kernel.release, "6.1.0-27-amd64");
}

TEST_F(PciDiscoverTest, PfFacts) {
  BuildHost();
  auto facts = Discover();
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  const PciFunction* pf = facts->FindPci("0000:af:00.0");
  ASSERT_NE(pf, nullptr);
  EXPECT_EQ(pf->vendor, "15b3");
  EXPECT_EQ(pf->device_id, "1017");
  EXPECT_EQ(pf->class_code, 0x020000u);
  EXPECT_TRUE(pf->IsNetwork());
  EXPECT_EQ(pf->vendor_name, "Mellanox Technologies");
  EXPECT_EQ(pf->device_name, "MT27800 Family [ConnectX-5]");
  EXPECT_EQ(pf->sysfs_path, "/sys/devices/pci0000:ae/0000:ae:00.0/0000:af:00.0");
  EXPECT_EQ(pf->driver, "mlx5_core");
  EXPECT_EQ(pf->numa_node, 1);
  EXPECT_EQ(pf->netdevs, std::vector<std::string>{"ens6f0np0"});
  EXPECT_EQ(pf->rdma_devices, std::vector<std::string>{"mlx5_0"});
  EXPECT_FALSE(pf->IsVf());
  EXPECT_FALSE(pf->vf_index.has_value());
  EXPECT_FALSE(pf->sriov.has_value());  // the sriov module's fact
  EXPECT_EQ(pf->iommu_group, "");

  const PciFunction* port = facts->FindPci("0000:ae:00.0");
  ASSERT_NE(port, nullptr);
  EXPECT_EQ(port->class_code, 0x060400u);
  EXPECT_EQ(port->vendor_name, "Intel Corporation");
  EXPECT_EQ(port->device_name, "");  // not in this pci.ids
  EXPECT_FALSE(port->IsNetwork());
}

TEST_F(PciDiscoverTest, VfsKnowTheirPfAndIndex) {
  BuildHost();
  auto facts = Discover();
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  const PciFunction* vf0 = facts->FindPci("0000:af:01.2");
  const PciFunction* vf1 = facts->FindPci("0000:af:01.3");
  ASSERT_NE(vf0, nullptr);
  ASSERT_NE(vf1, nullptr);
  EXPECT_TRUE(vf0->IsVf());
  EXPECT_EQ(vf0->physfn, "0000:af:00.1");
  EXPECT_EQ(vf0->vf_index, 0);
  EXPECT_EQ(vf0->netdevs, std::vector<std::string>{"ens6f1v0"});
  EXPECT_EQ(vf0->rdma_devices, std::vector<std::string>{"mlx5_2"});
  EXPECT_EQ(vf0->device_name, "MT27800 Family [ConnectX-5 Virtual Function]");
  EXPECT_EQ(vf1->physfn, "0000:af:00.1");
  EXPECT_EQ(vf1->vf_index, 1);
  EXPECT_EQ(vf1->driver, "vfio-pci");
  EXPECT_TRUE(vf1->netdevs.empty());
  EXPECT_EQ(vf1->iommu_group, "42");
  // Nics(): network PFs with SR-IOV or RDMA; VFs never.
  auto nics = facts->Nics();
  ASSERT_EQ(nics.size(), 2u);
}

TEST_F(PciDiscoverTest, OptionalFactsMissing) {
  tree_->AddFunction(FunctionSpec::At("0000:03:00.0").Numa(""));
  auto facts = Discover();
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  ASSERT_EQ(facts->pci.size(), 1u);
  const PciFunction& f = facts->pci[0];
  EXPECT_EQ(f.numa_node, -1);
  EXPECT_EQ(f.driver, "");
  EXPECT_TRUE(f.netdevs.empty());
  EXPECT_TRUE(f.rdma_devices.empty());
  EXPECT_EQ(facts->kernel.release, "");  // no /proc/sys/kernel/osrelease: not an error
}

// Captures without /proc/sys keep /proc/version: the release is its third
// word. The line is hwloc's 32intel64-2p8co2t+8ve capture's, verbatim
// (../shared/hostdata/hwloc), a CentOS 7 host.
TEST_F(PciDiscoverTest, KernelReleaseFromProcVersionWithoutOsrelease) {
  tree_->AddFunction(FunctionSpec::At("0000:03:00.0"));
  tree_->WriteFile("/proc/version",
                   "Linux version 3.10.0-1160.15.2.el7.x86_64 (mockbuild@kbuilder.bsys.centos.org) "
                   "(gcc version 4.8.5 20150623 (Red Hat 4.8.5-44) (GCC) ) #1 SMP Wed Feb 3 "
                   "15:06:38 UTC 2021\n");
  auto facts = Discover();
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  EXPECT_EQ(facts->kernel.release, "3.10.0-1160.15.2.el7.x86_64");
  // osrelease, when there, wins; text that is not a version line is no release.
  tree_->WriteFile("/proc/sys/kernel/osrelease", "6.1.0-27-amd64\n");
  EXPECT_EQ(Discover()->kernel.release, "6.1.0-27-amd64");
  tree_->WriteFile("/proc/sys/kernel/osrelease", "");
  tree_->WriteFile("/proc/version", "garbage\n");
  EXPECT_EQ(Discover()->kernel.release, "");
}

// Under a tree root (a partial capture), a function libpci cannot scan is
// skipped with a warning naming the missing file; libpci does not exit.
TEST_F(PciDiscoverTest, MissingVendorFileSkipsTheFunctionWithAWarning) {
  BuildHost();
  tree_->Remove(tree_->DevicePath("0000:af:00.1") + "/vendor");
  auto facts = Discover();
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  EXPECT_EQ(facts->pci.size(), 4u);
  EXPECT_EQ(facts->FindPci("0000:af:00.1"), nullptr);
  ASSERT_EQ(facts->warnings.size(), 1u);
  EXPECT_NE(facts->warnings[0].find("0000:af:00.1/vendor is missing"), std::string::npos)
      << facts->warnings[0];
  // libpci is usable again afterwards.
  tree_->WriteFile(tree_->DevicePath("0000:af:00.1") + "/vendor", "0x15b3\n");
  auto again = Discover();
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->pci.size(), 5u);
}

TEST_F(PciDiscoverTest, GarbageEntryIsSkippedWithAWarning) {
  BuildHost();
  std::filesystem::create_directories(root_ + "/sys/bus/pci/devices/not-a-bdf");
  auto facts = Discover();
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  EXPECT_EQ(facts->pci.size(), 5u);
  ASSERT_EQ(facts->warnings.size(), 1u);
  EXPECT_NE(facts->warnings[0].find("not-a-bdf"), std::string::npos) << facts->warnings[0];
}

// Under a tree root: a warning, and the other modules' facts survive.
TEST_F(PciDiscoverTest, NoPciTreeIsAWarningNotAFailure) {
  auto facts = Discover();  // empty root: no /sys/bus/pci at all
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  EXPECT_TRUE(facts->pci.empty());
  ASSERT_EQ(facts->warnings.size(), 1u);
  EXPECT_EQ(facts->warnings[0],
            "/sys/bus/pci/devices is not in the tree: no PCI functions discovered");
}

TEST_F(PciDiscoverTest, WithoutTreePciIdsUsesTheSystemOne) {
  tree_->AddFunction(FunctionSpec::At("0000:af:00.0"));
  auto facts = Discover();
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  if (!std::filesystem::exists(std::string(kPciIdsPath))) GTEST_SKIP() << "no system pci.ids";
  EXPECT_NE(facts->pci[0].vendor_name.find("Mellanox"), std::string::npos)
      << facts->pci[0].vendor_name;
}

// A tree captured from a real host (prometheus/procfs fixtures): an Intel
// E810 PF, an NVMe drive behind a root port, GPUs.
TEST_F(PciDiscoverTest, LibpciForTheLiveRootOnly) {
  // Under a tree root the IDs come through the host layer (confined to the
  // tree); libpci scans only the live root.
  auto live = NewLocalHostFs("/");
  EXPECT_EQ(NewPciIdentSource(*live)->Source(), "libpci");
  fs_ = NewLocalHostFs(root_);
  EXPECT_EQ(NewPciIdentSource(*fs_)->Source(), "host layer");
}

TEST(PciDiscoverCapturedTest, ProcfsFixture) {
  std::string root = testing::MakeTempDir("procfs");
  ASSERT_TRUE(testing::ExtractTtar(
                  testing::RunfilePath("test/support/testdata/fixtures-sys-subset.ttar"), root, 1)
                  .ok());
  auto fs = NewLocalHostFs(root);
  HostContext ctx;
  ctx.fs = fs.get();
  HostFacts facts;
  PciModule pci;
  Status s = pci.Discover(ctx, facts);
  ASSERT_TRUE(s.ok()) << s.message();
  const PciFunction* e810 = facts.FindPci("0000:a2:00.0");
  ASSERT_NE(e810, nullptr);
  EXPECT_EQ(e810->vendor, "8086");
  EXPECT_EQ(e810->device_id, "159b");
  EXPECT_TRUE(e810->IsNetwork());
  EXPECT_EQ(e810->driver, "ice");
  EXPECT_EQ(e810->numa_node, 1);
  EXPECT_EQ(e810->netdevs, std::vector<std::string>{"enp162s0f0np0"});
  const PciFunction* nvme = facts.FindPci("0000:01:00.0");
  ASSERT_NE(nvme, nullptr);
  EXPECT_EQ(nvme->driver, "nvme");
  EXPECT_EQ(nvme->iommu_group, "11");
  EXPECT_EQ(nvme->sysfs_path, "/sys/devices/pci0000:00/0000:00:02.1/0000:01:00.0");
}

// A discovery-only module (DiscoveryModule) refuses a change addressed to it
// already in CheckChange, so apply refuses a saved plan or journal naming it
// before it changes anything; Apply and Verify refuse it too.
TEST(PciModuleChanges, RefusedBeforeApply) {
  PciModule module;
  Change c;
  c.id = "pci/0000:19:00.0/x";
  c.module = "pci";
  c.target = "0000:19:00.0";
  const Status check = module.CheckChange(c);
  EXPECT_EQ(check.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(check.message(), "module pci plans no changes (pci/0000:19:00.0/x)");
  HostContext ctx;
  EXPECT_EQ(module.Apply(c, ctx).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(module.Verify(c, ctx).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace provisioner
