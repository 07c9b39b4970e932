// The simulator's driver binding (driver_override, bind, unbind,
// drivers_probe) and IB VF GUIDs: in the core (SriovSim), behind the
// in-process HostFs, and in the kernel_sim daemon.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "test/sim/sim_host_fs.h"
#include "test/sim/sriov_sim.h"
#include "test/support/files.h"
#include "test/support/host_presets.h"
#include "test/support/host_tree.h"
#include "test/support/tree_diff.h"
#include "test/support/ttar.h"

extern char** environ;

namespace provisioner::testing {
namespace {

const std::string kPf0 = "/sys/bus/pci/devices/0000:af:00.0";
const std::string kVf0 = "0000:af:00.2";
const std::string kVf0Dir = "/sys/bus/pci/devices/0000:af:00.2";
const std::string kIbPf = "/sys/bus/pci/devices/0000:86:00.0";
const std::string kIbVf0 = "0000:86:00.1";

std::string NewTree(const HostSpec& spec) {
  std::string dir = MakeTempDir("tree");
  Status s = BuildHostTree(spec, dir);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return dir;
}

std::string LinkBase(const std::string& path) {
  char buf[4096];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  if (n < 0) return "";
  std::string t(buf, static_cast<size_t>(n));
  return t.substr(t.rfind('/') + 1);
}

class BindSimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = NewTree(Cx5RoceHost());
    pristine_ = NewTree(Cx5RoceHost());
  }
  std::string Driver() const { return LinkBase(root_ + kVf0Dir + "/driver"); }
  // numVfs 0 leaves the tree as it was built, but for the vfio-pci driver
  // the test registered.
  void ExpectSriovOffRestoresTheTree(SriovSim& sim) {
    ASSERT_EQ(sim.WriteNumVfs(kPf0, "0"), 0);
    TreeDiffOptions o;
    o.ignore = {"sys/bus/pci/drivers/vfio-pci"};
    EXPECT_EQ(DiffTreesText(pristine_, root_, o), "");
  }
  std::string root_;
  std::string pristine_;
};

TEST_F(BindSimTest, UnbindOverrideBindVfioAndBack) {
  SriovSim sim(root_);
  ASSERT_EQ(sim.WriteNumVfs(kPf0, "2"), 0);
  ASSERT_TRUE(sim.Flush().ok());
  ASSERT_EQ(Driver(), "mlx5_core");
  ASSERT_TRUE(Exists(root_ + "/sys/class/net/ens6f0v0"));
  ASSERT_TRUE(Exists(root_ + "/sys/class/infiniband/mlx5_2"));
  const std::string group = LinkBase(root_ + kVf0Dir + "/iommu_group");
  ASSERT_FALSE(group.empty());

  // Kernel answers (kernel-facts.md "Binding VFs").
  EXPECT_EQ(sim.Bind("mlx5_core", kVf0), EBUSY);
  EXPECT_EQ(sim.Unbind("vfio-pci", kVf0), ENOENT);  // driver not registered (module not loaded)
  EXPECT_EQ(sim.Bind("mlx5_core", "0000:af:07.7"), ENODEV);
  ASSERT_TRUE(sim.RegisterDriver("vfio-pci").ok());
  EXPECT_TRUE(Exists(root_ + "/sys/bus/pci/drivers/vfio-pci/bind"));
  EXPECT_EQ(sim.Unbind("vfio-pci", kVf0), ENODEV);  // not bound to it

  // Leaving mlx5_core takes the VF's netdev and RDMA device away.
  ASSERT_EQ(sim.Unbind("mlx5_core", kVf0 + "\n"), 0);
  EXPECT_EQ(Driver(), "");
  EXPECT_FALSE(Exists(root_ + "/sys/bus/pci/drivers/mlx5_core/" + kVf0));
  EXPECT_FALSE(Exists(root_ + "/sys/class/net/ens6f0v0"));
  EXPECT_FALSE(Exists(root_ + kVf0Dir + "/net"));
  EXPECT_FALSE(Exists(root_ + "/sys/class/infiniband/mlx5_2"));
  EXPECT_EQ(ReadFile(root_ + kVf0Dir + "/uevent").find("DRIVER="), std::string::npos);

  // vfio-pci matches only through driver_override.
  EXPECT_EQ(sim.Bind("vfio-pci", kVf0), ENODEV);
  ASSERT_EQ(sim.WriteDriverOverride(kVf0Dir, "vfio-pci"), 0);
  EXPECT_EQ(ReadFile(root_ + kVf0Dir + "/driver_override"), "vfio-pci\n");
  EXPECT_EQ(sim.Bind("mlx5_core", kVf0), ENODEV);  // the override names another driver
  ASSERT_EQ(sim.Bind("vfio-pci", kVf0), 0);
  EXPECT_EQ(Driver(), "vfio-pci");
  EXPECT_TRUE(Exists(root_ + "/dev/vfio/" + group));
  EXPECT_EQ(ReadFile(root_ + kVf0Dir + "/uevent").rfind("DRIVER=vfio-pci\n", 0), 0u);
  ASSERT_TRUE(sim.Flush().ok());
  EXPECT_FALSE(Exists(root_ + "/sys/class/net/ens6f0v0"));  // no netdev on vfio-pci

  // And back: clear the override, unbind, probe.
  ASSERT_EQ(sim.WriteDriverOverride(kVf0Dir, "\n"), 0);
  EXPECT_EQ(ReadFile(root_ + kVf0Dir + "/driver_override"), "(null)\n");
  ASSERT_EQ(sim.Unbind("vfio-pci", kVf0), 0);
  EXPECT_FALSE(Exists(root_ + "/dev"));  // the last vfio group node went, and /dev with it
  ASSERT_EQ(sim.DriversProbe(kVf0), 0);
  EXPECT_EQ(Driver(), "mlx5_core");
  EXPECT_FALSE(Exists(root_ + "/sys/class/net/ens6f0v0"));  // later, like a probe
  ASSERT_TRUE(sim.Flush().ok());
  EXPECT_TRUE(Exists(root_ + "/sys/class/net/ens6f0v0"));
  EXPECT_TRUE(Exists(root_ + kVf0Dir + "/infiniband/mlx5_2"));
  EXPECT_EQ(sim.DriversProbe("0000:af:07.7"), ENODEV);

  // Disabling SR-IOV restores the tree (but the registered driver).
  ExpectSriovOffRestoresTheTree(sim);
}

TEST_F(BindSimTest, VfioBoundVfsAreCleanedUpBySriovOff) {
  SriovSim sim(root_);
  ASSERT_TRUE(sim.RegisterDriver("vfio-pci").ok());
  ASSERT_EQ(sim.WriteNumVfs(kPf0, "1"), 0);
  ASSERT_EQ(sim.Unbind("mlx5_core", kVf0), 0);  // before its netdev even appeared
  EXPECT_EQ(sim.pending(), 0u);
  ASSERT_EQ(sim.WriteDriverOverride(kVf0Dir, "vfio-pci\n"), 0);
  ASSERT_EQ(sim.DriversProbe(kVf0), 0);
  EXPECT_EQ(Driver(), "vfio-pci");
  ExpectSriovOffRestoresTheTree(sim);
}

TEST_F(BindSimTest, ProbeWithoutARegisteredDriverSucceedsButBindsNothing) {
  SriovSim sim(root_);
  ASSERT_EQ(sim.WriteNumVfs(kPf0, "1"), 0);
  ASSERT_EQ(sim.Unbind("mlx5_core", kVf0), 0);
  ASSERT_EQ(sim.WriteDriverOverride(kVf0Dir, "vfio-pci"), 0);
  EXPECT_EQ(sim.DriversProbe(kVf0), 0);  // "reports success even when nothing bound"
  EXPECT_EQ(Driver(), "");
}

TEST_F(BindSimTest, VfioNeedsAnIommuGroup) {
  SriovSim sim(root_);
  ASSERT_TRUE(sim.RegisterDriver("vfio-pci").ok());
  ASSERT_EQ(sim.WriteNumVfs(kPf0, "1"), 0);
  ASSERT_EQ(sim.Unbind("mlx5_core", kVf0), 0);
  TreeWriter w(root_);
  ASSERT_TRUE(w.RemoveAll(kVf0Dir + "/iommu_group").ok());
  ASSERT_EQ(sim.WriteDriverOverride(kVf0Dir, "vfio-pci"), 0);
  EXPECT_EQ(sim.Bind("vfio-pci", kVf0), EINVAL);
  EXPECT_NE(sim.last_error().find("IOMMU"), std::string::npos) << sim.last_error();
  EXPECT_EQ(sim.DriversProbe(kVf0), 0);  // the probe error is not reported here
  EXPECT_EQ(Driver(), "");
}

TEST(IbGuidSimTest, RebindTakesTheGuidsOfTheSriovFiles) {
  std::string root = NewTree(Cx5IbHost());
  std::string pristine = NewTree(Cx5IbHost());
  SriovSim sim(root);
  ASSERT_EQ(sim.WriteNumVfs(kIbPf, "2"), 0);
  ASSERT_TRUE(sim.Flush().ok());
  // MLNX_OFED-style files with the VF's default GUID (PF GUID, last 16 bits 0xc000 + index).
  const std::string files = root + kIbPf + "/sriov/0/";
  EXPECT_EQ(ReadFile(files + "node"), "ec:0d:9a:03:00:8a:c0:00\n");
  EXPECT_EQ(ReadFile(files + "port"), "ec:0d:9a:03:00:8a:c0:00\n");
  EXPECT_EQ(ReadFile(files + "policy"), "Follow\n");
  const std::string vf_dir = root + "/sys/bus/pci/devices/" + kIbVf0;
  EXPECT_EQ(ReadFile(vf_dir + "/infiniband/mlx5_1/node_guid"), "ec0d:9a03:008a:c000\n");

  std::ofstream(files + "node", std::ios::trunc) << "ee:0d:9a:00:01:8a:bc:de\n";
  std::ofstream(files + "port", std::ios::trunc) << "ee:0d:9a:00:01:8a:bc:df\n";
  // Not taken until the driver probes the VF again.
  EXPECT_EQ(ReadFile(vf_dir + "/infiniband/mlx5_1/node_guid"), "ec0d:9a03:008a:c000\n");
  ASSERT_EQ(sim.Unbind("mlx5_core", kIbVf0), 0);
  EXPECT_FALSE(Exists(root + "/sys/class/infiniband/mlx5_1"));
  ASSERT_EQ(sim.Bind("mlx5_core", kIbVf0), 0);
  ASSERT_TRUE(sim.Flush().ok());
  EXPECT_EQ(ReadFile(vf_dir + "/infiniband/mlx5_1/node_guid"), "ee0d:9a00:018a:bcde\n");
  EXPECT_EQ(ReadFile(vf_dir + "/infiniband/mlx5_1/ports/1/gids/0"),
            "fe80:0000:0000:0000:ee0d:9a00:018a:bcdf\n");
  // The IPoIB address carries the port GUID too.
  EXPECT_NE(ReadFile(vf_dir + "/net/ibs5f0v0/address").find("ee:0d:9a:00:01:8a:bc:df"),
            std::string::npos);
  // VF 1 kept its default.
  EXPECT_EQ(ReadFile(root + "/sys/bus/pci/devices/0000:86:00.2/infiniband/mlx5_2/node_guid"),
            "ec0d:9a03:008a:c001\n");

  ASSERT_EQ(sim.WriteNumVfs(kIbPf, "0"), 0);
  EXPECT_FALSE(Exists(root + kIbPf + "/sriov"));
  EXPECT_EQ(DiffTreesText(pristine, root), "");
}

TEST(SimHostFsBindTest, WritesGoThroughTheSimulatorWithTheKernelsErrno) {
  std::string root = NewTree(Cx5RoceHost());
  SimOptions o;
  o.settle_reads = 2;
  auto fs = NewSimulatedHostFs(root, o);
  ASSERT_TRUE(fs->WriteAttr(kPf0 + "/sriov_numvfs", "1").ok());
  Status busy = fs->WriteAttr("/sys/bus/pci/drivers/mlx5_core/bind", kVf0);
  EXPECT_EQ(busy.err(), EBUSY) << busy.ToString();
  EXPECT_EQ(fs->WriteAttr("/sys/bus/pci/drivers/vfio-pci/bind", kVf0).err(), ENOENT);
  ASSERT_TRUE(fs->WriteAttr("/sys/bus/pci/drivers/mlx5_core/unbind", kVf0).ok());
  EXPECT_FALSE(fs->IsSymlink(kVf0Dir + "/driver"));
  EXPECT_EQ(fs->WriteAttr("/sys/bus/pci/drivers/mlx5_core/unbind", kVf0).err(), ENODEV);
  ASSERT_TRUE(fs->WriteAttr(kVf0Dir + "/driver_override", "mlx5_core").ok());
  EXPECT_EQ(*fs->ReadAttr(kVf0Dir + "/driver_override"), "mlx5_core");
  ASSERT_TRUE(fs->WriteAttr("/sys/bus/pci/drivers_probe", kVf0).ok());
  EXPECT_EQ(*fs->LinkBasename(kVf0Dir + "/driver"), "mlx5_core");
  // The netdev appears a few reads later, as after enabling VFs.
  EXPECT_FALSE(fs->IsDir(kVf0Dir + "/net"));
  bool seen = false;
  for (int i = 0; i < 5 && !seen; ++i) seen = fs->IsDir(kVf0Dir + "/net/ens6f0v0");
  EXPECT_TRUE(seen);
}

TEST(SimHostFsBindTest, LoadingVfioPciRegistersItsDriver) {
  std::string root = NewTree(Cx5RoceHost());
  auto fs = NewSimulatedHostFs(root, {});
  EXPECT_FALSE(fs->Exists("/sys/bus/pci/drivers/vfio-pci"));
  // What loading the module leaves in sysfs (an apply of a kmod change under a tree root).
  ASSERT_TRUE(fs->WriteFileAtomic("/sys/module/vfio_pci/initstate", "live\n", 0444).ok());
  EXPECT_TRUE(fs->Exists("/sys/bus/pci/drivers/vfio-pci/bind"));
  EXPECT_EQ(*fs->LinkBasename("/sys/bus/pci/drivers/vfio-pci/module"), "vfio_pci");
  // Already loaded when the simulator starts: registered at once.
  std::string loaded = NewTree(Cx5RoceHost());
  TreeWriter w(loaded);
  ASSERT_TRUE(w.WriteFile("/sys/module/vfio_pci/initstate", "live\n").ok());
  auto fs2 = NewSimulatedHostFs(loaded, {});
  EXPECT_TRUE(fs2->Exists("/sys/bus/pci/drivers/vfio-pci/unbind"));
}

// ------------------------------------------------------------------ daemon

TEST(KernelSimBindTest, DaemonBindsUnbindsAndRefuses) {
  std::string root = NewTree(Cx5RoceHost());
  std::string ready = MakeTempDir("ready") + "/ready";
  std::vector<std::string> argv = {RunfilePath("test/sim/kernel_sim"),
                                   "--root",
                                   root,
                                   "--netdev-delay-ms",
                                   "50",
                                   "--ready-file",
                                   ready,
                                   "--driver",
                                   "vfio-pci"};
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, args[0], nullptr, nullptr, args.data(), environ), 0);
  ASSERT_TRUE(WaitFor([&] { return Exists(ready); }));
  const std::string vf = root + kVf0Dir;
  auto driver = [&] { return LinkBase(vf + "/driver"); };

  KernelWrite(root + kPf0 + "/sriov_numvfs", "2");
  ASSERT_TRUE(WaitFor([&] { return Exists(root + "/sys/class/net/ens6f0v0"); }));
  KernelWrite(root + "/sys/bus/pci/drivers/mlx5_core/unbind", kVf0);
  ASSERT_TRUE(WaitFor([&] { return driver().empty(); }));
  EXPECT_TRUE(WaitFor([&] { return !Exists(root + "/sys/class/net/ens6f0v0"); }));
  EXPECT_EQ(ReadFile(root + "/sys/bus/pci/drivers/mlx5_core/unbind"), "");  // write-only again
  KernelWrite(vf + "/driver_override", "vfio-pci");
  ASSERT_TRUE(WaitFor([&] { return ReadFile(vf + "/driver_override") == "vfio-pci\n"; }));
  KernelWrite(root + "/sys/bus/pci/drivers/vfio-pci/bind", kVf0);
  ASSERT_TRUE(WaitFor([&] { return driver() == "vfio-pci"; }));
  // The group's node comes right after the driver link (the daemon is not
  // atomic; vfio-pci's probe makes it): wait for it too.
  EXPECT_TRUE(WaitFor([&] { return Exists(root + "/dev/vfio/" + LinkBase(vf + "/iommu_group")); }));

  // A second bind: EBUSY, logged like a refused sriov_numvfs write.
  KernelWrite(root + "/sys/bus/pci/drivers/vfio-pci/bind", kVf0);
  const std::string refused = root + "/run/kernel-sim/refused";
  ASSERT_TRUE(WaitFor([&] { return !ReadFile(refused).empty(); }));
  EXPECT_EQ(ReadFile(refused), "/sys/bus/pci/drivers/vfio-pci/bind EBUSY\n");

  // Back to mlx5_core through drivers_probe; the netdev comes back later.
  KernelWrite(vf + "/driver_override", "\n");
  ASSERT_TRUE(WaitFor([&] { return ReadFile(vf + "/driver_override") == "(null)\n"; }));
  KernelWrite(root + "/sys/bus/pci/drivers/vfio-pci/unbind", kVf0);
  ASSERT_TRUE(WaitFor([&] { return driver().empty(); }));
  KernelWrite(root + "/sys/bus/pci/drivers_probe", kVf0);
  ASSERT_TRUE(WaitFor([&] { return driver() == "mlx5_core"; }));
  ASSERT_TRUE(WaitFor([&] { return Exists(root + "/sys/class/net/ens6f0v0"); }));

  // Loading vfio_pci (a /sys/module entry appearing) registers nothing new
  // here (registered by --driver), but a second module directory is seen too.
  ASSERT_TRUE(TreeWriter(root).RemoveAll("/sys/bus/pci/drivers/vfio-pci").ok());
  ASSERT_EQ(::mkdir((root + "/sys/module/vfio_pci").c_str(), 0755), 0);
  EXPECT_TRUE(WaitFor([&] { return Exists(root + "/sys/bus/pci/drivers/vfio-pci/bind"); }));

  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace provisioner::testing
