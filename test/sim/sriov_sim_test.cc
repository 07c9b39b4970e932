#include "test/sim/sriov_sim.h"

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "test/support/files.h"
#include "test/support/host_presets.h"
#include "test/support/host_tree.h"
#include "test/support/tree_diff.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

const std::string kPf0 = "/sys/bus/pci/devices/0000:af:00.0";
const std::string kPf1 = "/sys/bus/pci/devices/0000:af:00.1";

std::string NewRoceTree() {
  std::string dir = MakeTempDir("roce");
  Status s = BuildHostTree(Cx5RoceHost(), dir);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return dir;
}

std::string Bdf(int domain, int bus, int dev, int fn) {
  return PciBdf{domain, bus, dev, fn}.ToString();
}

TEST(ParseNumVfsWriteTest, BehavesLikeKstrtou16) {
  EXPECT_EQ(ParseNumVfsWrite("4"), 4);
  EXPECT_EQ(ParseNumVfsWrite("4\n"), 4);
  EXPECT_EQ(ParseNumVfsWrite("+4"), 4);
  EXPECT_EQ(ParseNumVfsWrite("0"), 0);
  EXPECT_EQ(ParseNumVfsWrite("0x10"), 16);
  EXPECT_EQ(ParseNumVfsWrite("010"), 8);
  EXPECT_EQ(ParseNumVfsWrite("65535"), 65535);
  EXPECT_EQ(ParseNumVfsWrite("65536"), -ERANGE);
  EXPECT_EQ(ParseNumVfsWrite("99999999999999999999999"), -ERANGE);
  for (const char* bad : {"", "\n", "abc", "-1", " 4", "4 ", "4\n\n", "0x", "08", "4.0", "four"}) {
    EXPECT_EQ(ParseNumVfsWrite(bad), -EINVAL) << "'" << bad << "'";
  }
}

TEST(VfBdfTest, RoutingIdArithmetic) {
  PciBdf pf0{0, 0xaf, 0, 0};
  PciBdf pf1{0, 0xaf, 0, 1};
  EXPECT_EQ(VfBdf(pf0, 2, 1, 0)->ToString(), "0000:af:00.2");
  EXPECT_EQ(VfBdf(pf0, 2, 1, 5)->ToString(), "0000:af:00.7");
  EXPECT_EQ(VfBdf(pf0, 2, 1, 6)->ToString(), "0000:af:01.0");  // function wraps into device
  EXPECT_EQ(VfBdf(pf0, 2, 1, 126)->ToString(), "0000:af:10.0");
  EXPECT_EQ(VfBdf(pf1, 128, 1, 0)->ToString(), "0000:af:10.1");
  EXPECT_EQ(VfBdf(pf1, 128, 1, 126)->ToString(), "0000:af:1f.7");
  EXPECT_EQ(VfBdf(pf1, 128, 1, 127)->ToString(), "0000:b0:00.0");  // device wraps into bus
  // Intel I350 (offset 128, stride 4), as in the ghw capture.
  PciBdf i350_0{0, 0x05, 0, 0};
  PciBdf i350_1{0, 0x05, 0, 1};
  EXPECT_EQ(VfBdf(i350_0, 128, 4, 0)->ToString(), "0000:05:10.0");
  EXPECT_EQ(VfBdf(i350_0, 128, 4, 1)->ToString(), "0000:05:10.4");
  EXPECT_EQ(VfBdf(i350_0, 128, 4, 2)->ToString(), "0000:05:11.0");
  EXPECT_EQ(VfBdf(i350_1, 128, 4, 1)->ToString(), "0000:05:10.5");
  // Domains are kept; running off the last bus is no address at all.
  EXPECT_EQ(VfBdf(PciBdf{0x10, 0x3b, 0x1f, 7}, 1, 1, 0)->ToString(), "0010:3c:00.0");
  EXPECT_FALSE(VfBdf(PciBdf{0, 0xff, 0x1f, 0}, 8, 1, 0).has_value());
  EXPECT_EQ(ParseBdf("0000:AF:00.1")->ToString(), "0000:af:00.1");
  EXPECT_FALSE(ParseBdf("0000:af:00.8").has_value());
  EXPECT_FALSE(ParseBdf("af:00.0").has_value());
  EXPECT_EQ(Bdf(0, 0xaf, 0x1f, 7), "0000:af:1f.7");
}

TEST(VfNamingTest, NetdevsAndDrivers) {
  EXPECT_EQ(VfNetdevName("ens6f0np0", 0), "ens6f0v0");
  EXPECT_EQ(VfNetdevName("ens6f1np1", 12), "ens6f1v12");
  EXPECT_EQ(VfNetdevName("enp5s0f0", 3), "enp5s0f0v3");
  EXPECT_EQ(VfNetdevName("ibs5f0", 1), "ibs5f0v1");
  EXPECT_EQ(VfNetdevName("enpnp", 1), "enpnpv1");
  EXPECT_EQ(VfDriverFor("mlx5_core"), "mlx5_core");
  EXPECT_EQ(VfDriverFor("igb"), "igbvf");
  EXPECT_EQ(VfDriverFor("ice"), "iavf");
}

class SriovSimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = NewRoceTree();
    pristine_ = NewRoceTree();
  }
  std::string F(const std::string& host_path) const { return root_ + host_path; }
  std::string Diff() const { return DiffTreesText(pristine_, root_); }

  std::string root_;
  std::string pristine_;
};

// Issue 39: a VF netdev's IPv4 state. It gets /proc/sys/net/ipv4/conf/<vf>/
// as a copy of conf/default (inetdev_init), and when it goes, that
// directory, its addresses in the railnet capture and the routes through
// it go too; the routes of other netdevs and the rules stay.
TEST_F(SriovSimTest, VfNetdevsIpv4ConfFromDefaultAndGoneWithTheVf) {
  for (const std::string& root : {root_, pristine_}) {
    std::filesystem::create_directories(root + "/proc/sys/net/ipv4/conf/default");
    std::ofstream(root + "/proc/sys/net/ipv4/conf/default/rp_filter") << "2\n";
    std::ofstream(root + "/proc/sys/net/ipv4/conf/default/arp_ignore") << "0\n";
  }
  SriovSim sim(root_);
  ASSERT_EQ(sim.WriteNumVfs(kPf0, "2"), 0);
  ASSERT_TRUE(sim.Flush().ok());
  EXPECT_EQ(ReadFile(F("/proc/sys/net/ipv4/conf/ens6f0v1/rp_filter")), "2\n");
  EXPECT_EQ(ReadFile(F("/proc/sys/net/ipv4/conf/ens6f0v1/arp_ignore")), "0\n");
  std::ofstream(F("/run/provisioner/rail-addresses"))
      << "ens6f0np0 172.16.1.7/24\nens6f0v0 172.16.1.71/24\nens6f0v1 172.16.1.72/24\n";
  std::ofstream(F("/run/provisioner/routes"))
      << "table 101 172.16.1.0/24 dev ens6f0np0 scope link src 172.16.1.7\n"
         "table 101000 172.16.1.0/24 dev ens6f0v0 scope link src 172.16.1.71\n"
         "table 101000 default via 172.16.1.254 dev ens6f0v0\n";
  ASSERT_EQ(sim.WriteNumVfs(kPf0, "0"), 0);
  EXPECT_FALSE(Exists(F("/proc/sys/net/ipv4/conf/ens6f0v0")));
  EXPECT_EQ(ReadFile(F("/run/provisioner/rail-addresses")), "ens6f0np0 172.16.1.7/24\n");
  EXPECT_EQ(ReadFile(F("/run/provisioner/routes")),
            "table 101 172.16.1.0/24 dev ens6f0np0 scope link src 172.16.1.7\n");
}

TEST_F(SriovSimTest, WriteErrorsInKernelOrderAndLeaveTheTreeAlone) {
  SriovSim sim(root_);
  EXPECT_EQ(sim.WriteNumVfs(kPf0, "abc"), EINVAL);
  EXPECT_EQ(sim.WriteNumVfs(kPf0, ""), EINVAL);
  EXPECT_EQ(sim.WriteNumVfs(kPf0, "-1"), EINVAL);
  EXPECT_EQ(sim.WriteNumVfs(kPf0, "128"), ERANGE);
  EXPECT_EQ(sim.WriteNumVfs(kPf0, "70000"), ERANGE);
  EXPECT_EQ(sim.WriteNumVfs(kPf0, "0"), 0);  // equal: no-op
  EXPECT_EQ(Diff(), "");
  // No PF driver: ENOENT, but only once the range and no-op checks passed.
  TreeWriter w(root_);
  ASSERT_TRUE(w.RemoveAll("/sys/devices/pci0000:ae/0000:ae:00.0/0000:af:00.0/driver").ok());
  EXPECT_EQ(sim.WriteNumVfs(kPf0, "4"), ENOENT);
  EXPECT_EQ(sim.WriteNumVfs(kPf0, "200"), ERANGE);
  EXPECT_EQ(sim.WriteNumVfs(kPf0, "0"), 0);
  EXPECT_EQ(sim.CountVfs(kPf0), 0);
  // A function without SR-IOV files.
  EXPECT_EQ(sim.WriteNumVfs("/sys/bus/pci/devices/0000:02:00.0", "1"), ENOENT);
}

TEST_F(SriovSimTest, EnableCreatesVfFunctionsThenDevicesOnFlush) {
  SriovSim sim(root_);
  ASSERT_EQ(sim.WriteNumVfs(kPf0, "4\n"), 0) << sim.last_error();
  EXPECT_EQ(ReadFile(F(kPf0 + "/sriov_numvfs")), "4\n");
  const std::string parent = "/sys/devices/pci0000:ae/0000:ae:00.0/";
  for (int i = 0; i < 4; ++i) {
    std::string bdf = Bdf(0, 0xaf, 0, 2 + i);
    std::string vf = "/sys/bus/pci/devices/" + bdf;
    SCOPED_TRACE(bdf);
    TreeWriter w(root_);
    EXPECT_EQ(w.ReadLink(vf), "../../../devices/pci0000:ae/0000:ae:00.0/" + bdf);
    EXPECT_EQ(w.ReadLink(parent + "0000:af:00.0/virtfn" + std::to_string(i)), "../" + bdf);
    EXPECT_EQ(w.ReadLink(parent + bdf + "/physfn"), "../0000:af:00.0");
    EXPECT_EQ(w.ReadLink(parent + bdf + "/driver"), "../../../../bus/pci/drivers/mlx5_core");
    EXPECT_EQ(w.ReadLink("/sys/bus/pci/drivers/mlx5_core/" + bdf),
              "../../../../devices/pci0000:ae/0000:ae:00.0/" + bdf);
    EXPECT_EQ(ReadFile(F(vf + "/vendor")), "0x15b3\n");
    EXPECT_EQ(ReadFile(F(vf + "/device")), "0x1018\n");
    EXPECT_EQ(ReadFile(F(vf + "/class")), "0x020000\n");
    EXPECT_EQ(ReadFile(F(vf + "/irq")), "0\n");
    EXPECT_EQ(ReadFile(F(vf + "/numa_node")), "1\n");
    EXPECT_EQ(ReadFile(F(vf + "/local_cpulist")), "24-47,72-95\n");
    char bar[96];
    snprintf(bar, sizeof bar, "0x000003c000%d00000 0x000003c000%dfffff 0x000000000014220c\n", i, i);
    EXPECT_EQ(ReadFile(F(vf + "/resource")).substr(0, 57), bar);  // carved from the PF's IOV BAR
    EXPECT_FALSE(w.Exists(vf + "/sriov_totalvfs"));
    EXPECT_FALSE(w.Exists(parent + bdf + "/net"));  // not yet
  }
  EXPECT_EQ(sim.pending(), 4u);
  ASSERT_TRUE(sim.Flush().ok());
  EXPECT_EQ(sim.pending(), 0u);
  TreeWriter w(root_);
  EXPECT_EQ(w.List("/sys/class/net"),
            (std::vector<std::string>{"eno1", "ens6f0np0", "ens6f0v0", "ens6f0v1", "ens6f0v2",
                                      "ens6f0v3", "ens6f1np1", "lo"}));
  EXPECT_EQ(w.List("/sys/class/infiniband"),
            (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5"}));
  EXPECT_EQ(w.ReadLink("/sys/class/net/ens6f0v2"),
            "../../devices/pci0000:ae/0000:ae:00.0/0000:af:00.4/net/ens6f0v2");
  EXPECT_EQ(w.ReadLink("/sys/class/infiniband/mlx5_5"),
            "../../devices/pci0000:ae/0000:ae:00.0/0000:af:00.5/infiniband/mlx5_5");
  EXPECT_EQ(ReadFile(F("/sys/class/infiniband/mlx5_2/hca_type")), "MT4120\n");
  EXPECT_EQ(ReadFile(F("/sys/class/infiniband/mlx5_2/ports/1/link_layer")), "Ethernet\n");
  EXPECT_EQ(ReadFile(F("/sys/class/infiniband/mlx5_2/ports/1/gid_attrs/ndevs/0")), "ens6f0v0\n");
  EXPECT_EQ(ReadFile(F("/sys/class/infiniband/mlx5_2/ports/1/gid_attrs/types/1")), "RoCE v2\n");
  EXPECT_EQ(ReadFile(F("/sys/class/net/ens6f0v0/ifindex")), "5\n");
  EXPECT_EQ(ReadFile(F("/sys/class/net/ens6f0v3/ifindex")), "8\n");
  EXPECT_EQ(w.ReadLink("/sys/class/infiniband_verbs/uverbs5"),
            "../../devices/pci0000:ae/0000:ae:00.0/0000:af:00.5/infiniband_verbs/uverbs5");
  // Equal count: success, no change.
  EXPECT_EQ(sim.WriteNumVfs(kPf0, "4"), 0);
  EXPECT_EQ(sim.pending(), 0u);
}

TEST_F(SriovSimTest, NonZeroToNonZeroIsEbusyAndChangesNothing) {
  SriovSim sim(root_);
  ASSERT_EQ(sim.WriteNumVfs(kPf0, "4"), 0);
  ASSERT_TRUE(sim.Flush().ok());
  std::string snapshot = MakeTempDir("snap") + "/t.ttar";
  ASSERT_TRUE(WriteTtar(root_, snapshot).ok());
  EXPECT_EQ(sim.WriteNumVfs(kPf0, "8"), EBUSY);
  EXPECT_NE(sim.last_error().find("4 VFs already enabled"), std::string::npos) << sim.last_error();
  EXPECT_EQ(sim.WriteNumVfs(kPf0, "2"), EBUSY);
  std::string again = MakeTempDir("snap") + "/t.ttar";
  ASSERT_TRUE(WriteTtar(root_, again).ok());
  EXPECT_TRUE(ReadFile(snapshot) == ReadFile(again));
}

TEST_F(SriovSimTest, ZeroRemovesEverythingByteForByte) {
  SriovSim sim(root_);
  ASSERT_EQ(sim.WriteNumVfs(kPf0, "4"), 0);
  ASSERT_EQ(sim.WriteNumVfs(kPf1, "127"), 0);
  ASSERT_TRUE(sim.Flush().ok());
  EXPECT_NE(Diff(), "");
  TreeWriter w(root_);
  EXPECT_TRUE(w.Exists("/sys/bus/pci/devices/0000:af:1f.7"));  // PF1's last VF
  EXPECT_EQ(w.List("/sys/class/infiniband").size(), 2u + 4u + 127u);
  ASSERT_EQ(sim.WriteNumVfs(kPf0, "0"), 0);
  ASSERT_EQ(sim.WriteNumVfs(kPf1, "0\n"), 0);
  EXPECT_EQ(Diff(), "");
  // And again: the same names come back (smallest free mlx5_<n>).
  ASSERT_EQ(sim.WriteNumVfs(kPf1, "1"), 0);
  ASSERT_TRUE(sim.Flush().ok());
  EXPECT_TRUE(w.Exists("/sys/class/infiniband/mlx5_2"));
  EXPECT_EQ(w.ReadLink("/sys/class/net/ens6f1v0"),
            "../../devices/pci0000:ae/0000:ae:00.0/0000:af:10.1/net/ens6f1v0");
  ASSERT_EQ(sim.WriteNumVfs(kPf1, "0"), 0);
  EXPECT_EQ(Diff(), "");
}

TEST_F(SriovSimTest, ZeroBeforeDevicesAppearCancelsThem) {
  SriovSim sim(root_);
  ASSERT_EQ(sim.WriteNumVfs(kPf0, "3"), 0);
  EXPECT_EQ(sim.pending(), 3u);
  ASSERT_EQ(sim.WriteNumVfs(kPf0, "0"), 0);
  EXPECT_EQ(sim.pending(), 0u);
  ASSERT_TRUE(sim.Flush().ok());
  EXPECT_EQ(Diff(), "");
}

TEST_F(SriovSimTest, BatchesFlushInOrder) {
  SriovSim sim(root_);
  ASSERT_EQ(sim.WriteNumVfs(kPf0, "1"), 0);
  uint64_t first = sim.last_batch();
  ASSERT_EQ(sim.WriteNumVfs(kPf1, "1"), 0);
  ASSERT_TRUE(sim.Flush(first).ok());
  TreeWriter w(root_);
  EXPECT_TRUE(w.Exists("/sys/class/net/ens6f0v0"));
  EXPECT_FALSE(w.Exists("/sys/class/net/ens6f1v0"));
  ASSERT_TRUE(sim.Flush().ok());
  EXPECT_TRUE(w.Exists("/sys/class/net/ens6f1v0"));
}

TEST_F(SriovSimTest, DriverMayEnableFewer) {
  SriovSimOptions o;
  o.max_enable = 3;
  SriovSim sim(root_, o);
  ASSERT_EQ(sim.WriteNumVfs(kPf0, "8"), 0);
  EXPECT_EQ(ReadFile(F(kPf0 + "/sriov_numvfs")), "3\n");
  EXPECT_EQ(sim.CountVfs(kPf0), 3);
}

TEST_F(SriovSimTest, EnableFailuresLeaveNoVfs) {
  SriovSimOptions o;
  o.enable_error = ENOMEM;
  SriovSim failing(root_, o);
  EXPECT_EQ(failing.WriteNumVfs(kPf0, "4"), ENOMEM);
  EXPECT_EQ(Diff(), "");
  // Not enough bus numbers below the root port (subordinate bus af).
  TreeWriter w(root_);
  ASSERT_TRUE(
      w.WriteFile("/sys/devices/pci0000:ae/0000:ae:00.0/0000:af:00.0/sriov_offset", "250\n").ok());
  SriovSim sim(root_);
  EXPECT_EQ(sim.WriteNumVfs(kPf0, "8"), ENOMEM) << sim.last_error();
  EXPECT_EQ(sim.CountVfs(kPf0), 0);
  EXPECT_EQ(ReadFile(F(kPf0 + "/sriov_numvfs")), "0\n");
  ASSERT_TRUE(
      w.WriteFile("/sys/devices/pci0000:ae/0000:ae:00.0/0000:af:00.0/sriov_offset", "2\n").ok());
  EXPECT_EQ(Diff(), "");
}

TEST_F(SriovSimTest, AutoprobeOffMeansNoDriverAndNoDevices) {
  TreeWriter w(root_);
  ASSERT_TRUE(
      w.WriteFile("/sys/devices/pci0000:ae/0000:ae:00.0/0000:af:00.0/sriov_drivers_autoprobe",
                  "0\n", 0644)
          .ok());
  SriovSim sim(root_);
  ASSERT_EQ(sim.WriteNumVfs(kPf0, "2"), 0);
  EXPECT_EQ(sim.pending(), 0u);
  EXPECT_FALSE(w.Exists("/sys/bus/pci/devices/0000:af:00.2/driver"));
  EXPECT_TRUE(w.Exists("/sys/bus/pci/devices/0000:af:00.2/vendor"));
  ASSERT_EQ(sim.WriteNumVfs(kPf0, "0"), 0);
  ASSERT_TRUE(
      w.WriteFile("/sys/devices/pci0000:ae/0000:ae:00.0/0000:af:00.0/sriov_drivers_autoprobe",
                  "1\n", 0644)
          .ok());
  EXPECT_EQ(Diff(), "");
}

TEST(SriovSimIbTest, IpoibVfsGetIbNetdevsAndGuids) {
  std::string root = MakeTempDir("ib");
  ASSERT_TRUE(BuildHostTree(Cx5IbHost(), root).ok());
  SriovSim sim(root);
  ASSERT_EQ(sim.WriteNumVfs("/sys/bus/pci/devices/0000:86:00.0", "2"), 0);
  ASSERT_TRUE(sim.Flush().ok());
  TreeWriter w(root);
  EXPECT_TRUE(w.Exists("/sys/bus/pci/devices/0000:86:00.1"));
  EXPECT_TRUE(w.Exists("/sys/bus/pci/devices/0000:86:00.2"));
  EXPECT_EQ(ReadFile(root + "/sys/class/net/ibs5f0v1/type"), "32\n");
  EXPECT_EQ(ReadFile(root + "/sys/class/infiniband/mlx5_1/ports/1/link_layer"), "InfiniBand\n");
  EXPECT_EQ(ReadFile(root + "/sys/class/infiniband/mlx5_1/node_guid"), "ec0d:9a03:008a:c000\n");
  EXPECT_EQ(ReadFile(root + "/sys/class/infiniband/mlx5_1/ports/1/gids/0"),
            "fe80:0000:0000:0000:ec0d:9a03:008a:c000\n");
  EXPECT_FALSE(w.Exists("/sys/class/infiniband/mlx5_1/ports/1/gid_attrs/ndevs/0"));
  EXPECT_EQ(sim.WriteNumVfs("/sys/bus/pci/devices/0000:86:00.0", "17"), ERANGE);
}

}  // namespace
}  // namespace provisioner::testing
