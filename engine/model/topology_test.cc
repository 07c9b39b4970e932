#include "engine/model/topology.h"

#include <initializer_list>
#include <map>
#include <string>

#include "engine/model/selector.h"
#include "gtest/gtest.h"

namespace provisioner {
namespace {

std::string Level(const std::string& a, int na, const std::string& b, int nb,
                  const BridgeIdLookup& lookup = nullptr) {
  auto l = ComputePcieLevel(a, na, b, nb, lookup);
  return l ? PcieLevelName(*l) : "none";
}

// The sysfs path of a device in PCI domain 0000 below host bridge `bus`,
// through the bridges' and then the device's bus:device.function `chain`.
std::string UnderBridge(const std::string& bus, std::initializer_list<const char*> chain) {
  std::string path = "/sys/devices/pci0000:" + bus;
  for (const char* bdf : chain) path += std::string("/0000:") + bdf;
  return path;
}

// Root port -> switch upstream port -> downstream ports, like an HGX board.
const char* kSw = "/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0";

TEST(PcieLevelTest, SameSwitchIsPix) {
  EXPECT_EQ(Level(std::string(kSw) + "/0000:17:01.0/0000:19:00.0", 0,
                  std::string(kSw) + "/0000:17:02.0/0000:1a:00.0", 0),
            "PIX");
}

TEST(PcieLevelTest, SwitchBelowSwitchIsPxb) {
  // GPU behind a second switch hanging off the first one's downstream port.
  std::string gpu = std::string(kSw) + "/0000:17:01.0/0000:18:00.0/0000:19:00.0/0000:1b:00.0";
  std::string nic = std::string(kSw) + "/0000:17:02.0/0000:1a:00.0";
  EXPECT_EQ(Level(gpu, 0, nic, 0), "PXB");
  EXPECT_EQ(Level(nic, 0, gpu, 0), "PXB");  // symmetric
}

TEST(PcieLevelTest, BroadcomTwoLevelSwitchFlattensToPix) {
  // The same shape built of one Broadcom PEX 89xxx chip (its internal second
  // level): NCCL flattens it, so the pair is PIX; any other bridge keeps PXB.
  std::string gpu = std::string(kSw) + "/0000:17:01.0/0000:18:00.0/0000:19:00.0/0000:1b:00.0";
  std::string nic = std::string(kSw) + "/0000:17:02.0/0000:1a:00.0";
  std::map<std::string, std::string> ids = {{"0000:16:00.0", "1000:c030"},
                                            {"0000:18:00.0", "1000:c030"}};
  BridgeIdLookup bcm = [&](const std::string& bdf) { return ids.count(bdf) ? ids[bdf] : ""; };
  EXPECT_EQ(Level(gpu, 0, nic, 0, bcm), "PIX");
  ids["0000:18:00.0"] = "10b5:9797";  // a PLX switch below: no flattening
  EXPECT_EQ(Level(gpu, 0, nic, 0, bcm), "PXB");
  ids["0000:18:00.0"] = "1000:c010";  // other Broadcom generation: no flattening
  EXPECT_EQ(Level(gpu, 0, nic, 0, bcm), "PXB");
}

TEST(PcieLevelTest, DifferentRootPortsOfOneHostBridgeArePhb) {
  EXPECT_EQ(Level("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0", 0,
                  "/sys/devices/pci0000:00/0000:00:03.0/0000:02:00.0", 0),
            "PHB");
  // A switch on one side, a root port on the other: through the CPU.
  EXPECT_EQ(Level(std::string(kSw) + "/0000:17:01.0/0000:19:00.0", 0,
                  "/sys/devices/pci0000:15/0000:15:02.0/0000:30:00.0", 0),
            "PHB");
  // Integrated device on the host bridge itself.
  EXPECT_EQ(Level("/sys/devices/pci0000:00/0000:00:1f.6", 0,
                  "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0", 0),
            "PHB");
}

TEST(PcieLevelTest, HostBridgesOfOneNumaNodeAreNodeOtherwiseSys) {
  std::string a = "/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:01.0/0000:19:00.0";
  std::string b = "/sys/devices/pci0000:37/0000:37:01.0/0000:38:00.0/0000:39:02.0/0000:3c:00.0";
  EXPECT_EQ(Level(a, 0, b, 0), "NODE");
  EXPECT_EQ(Level(a, 0, b, 1), "SYS");
  EXPECT_EQ(Level(a, -1, b, 0), "NODE");  // no NUMA information = node 0
  EXPECT_EQ(Level(a, -1, b, -1), "NODE");
}

TEST(PcieLevelTest, NotAPciPath) {
  EXPECT_EQ(Level("/sys/devices/virtual/net/lo", 0, "/sys/devices/pci0000:00/0000:00:1f.6", 0),
            "none");
  EXPECT_EQ(Level("", 0, "/sys/devices/pci0000:00/0000:00:1f.6", 0), "none");
  // VMD domains have five hex digits.
  EXPECT_EQ(
      Level("/sys/devices/pci0000:00/0000:00:0e.0/pci10000:e0/10000:e0:1d.0/10000:e1:00.0", 0,
            "/sys/devices/pci0000:00/0000:00:0e.0/pci10000:e0/10000:e0:1d.1/10000:e2:00.0", 0),
      "PHB");
}

// Paths of real machines, each pair at the level NCCL gives it.
// - An HGX H100 node (leptonai/gpud pkg/pci/testdata/lspci-vvv, tree rebuilt
//   from the bridges' secondary/subordinate bus numbers): each GPU and its
//   ConnectX-7 sit on one PEX890xx switch; the ConnectX-6 Dx on the first
//   switch too.
// - A capture of open-mpi/hwloc (tests/hwloc/linux/32intel64-2p8co2t+8ve, the
//   /sys/bus/pci/devices links resolved): two Skylake-SP sockets, each with a
//   ConnectX-4 IB HCA and NEC vector engines (co-processors, class 0x0b40) on
//   one PLX PEX9797 switch (10b5:9797); an Intel X722 on a third host bridge.
//   (That capture's numa_node files all read 0; the test also tries node 1.)
TEST(PcieLevelTest, RealMachinePaths) {
  const std::string g0 = UnderBridge("15", {"15:01.0", "16:00.0", "17:01.0", "19:00.0"});
  const std::string n0 = UnderBridge("15", {"15:01.0", "16:00.0", "17:02.0", "1a:00.0"});
  const std::string dx = UnderBridge("15", {"15:01.0", "16:00.0", "17:03.0", "1b:00.0"});
  const std::string n1 = UnderBridge("37", {"37:01.0", "38:00.0", "39:02.0", "3c:00.0"});
  const std::string n4 = UnderBridge("97", {"97:01.0", "98:00.0", "99:02.0", "9c:00.0"});
  const std::string nic0 = UnderBridge("17", {"17:00.0", "18:00.0", "19:04.0", "1a:00.0"});
  const std::string ve0 = UnderBridge("17", {"17:00.0", "18:00.0", "19:08.0", "1b:00.0"});
  const std::string ve4 = UnderBridge("3a", {"3a:00.0", "3b:00.0", "3c:04.0", "3d:00.0"});
  const std::string nic1 = UnderBridge("3a", {"3a:00.0", "3b:00.0", "3c:08.0", "3e:00.0"});
  const std::string x722 = UnderBridge("5d", {"5d:02.0", "5e:00.0", "5f:03.0", "60:00.0"});
  struct Pair {
    const std::string& a;
    int a_node;
    const std::string& b;
    int b_node;
    const char* level;
  };
  const Pair pairs[] = {
      {g0, 0, n0, 0, "PIX"},
      {g0, 0, dx, 0, "PIX"},
      {g0, 0, n1, 0, "NODE"},
      {g0, 0, n4, 1, "SYS"},
      {ve0, 0, nic0, 0, "PIX"},
      {ve4, 0, nic1, 0, "PIX"},
      {ve0, 0, nic1, 0, "NODE"},
      {ve0, 0, nic1, 1, "SYS"},
      // The X722 sits one level deeper (5e:00.0 -> 5f:03.0): its switch node
      // is 5e:00.0, which hangs off the host bridge directly.
      {x722, 0, nic0, 0, "NODE"},
  };
  for (const Pair& p : pairs) {
    EXPECT_EQ(Level(p.a, p.a_node, p.b, p.b_node), p.level) << p.a << " ~ " << p.b;
  }
}

PciFunction Fn(const std::string& bdf, const std::string& path, uint32_t cls, std::string vendor,
               int numa) {
  PciFunction f;
  f.pci_address = bdf;
  f.sysfs_path = path + "/" + bdf;
  f.class_code = cls;
  f.vendor = std::move(vendor);
  f.device_id = cls == 0x020000 ? "1021" : "2330";
  f.numa_node = numa;
  if (cls == 0x020000) f.sriov = SriovInfo{};
  return f;
}

TEST(GpuRuleTest, DisplayClassFromGpuVendorsOnly) {
  EXPECT_TRUE(IsGpuFunction(Fn("0000:19:00.0", "/x", 0x030200, "10de", 0)));
  EXPECT_TRUE(IsGpuFunction(Fn("0000:19:00.0", "/x", 0x038000, "1002", 0)));  // Instinct
  EXPECT_TRUE(IsGpuFunction(Fn("0000:19:00.0", "/x", 0x038000, "1d94", 0)));  // Hygon DCU
  EXPECT_TRUE(IsGpuFunction(Fn("0000:19:00.0", "/x", 0x030000, "8086", 0)));
  EXPECT_FALSE(IsGpuFunction(Fn("0000:03:00.0", "/x", 0x030000, "1a03", 0)));  // ASPEED BMC VGA
  EXPECT_FALSE(IsGpuFunction(Fn("0000:83:00.0", "/x", 0x068000, "10de", 0)));  // NVSwitch
  PciFunction vf = Fn("0000:19:00.4", "/x", 0x030200, "10de", 0);
  vf.physfn = "0000:19:00.0";
  EXPECT_FALSE(IsGpuFunction(vf));
}

// Two switches, one NUMA node each: GPU a + NIC a, GPU b + NIC b; GPU c
// shares the second switch (no NIC of its own).
HostFacts RailHost() {
  HostFacts h;
  const std::string s0 = "/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0";
  const std::string s1 = "/sys/devices/pci0000:97/0000:97:01.0/0000:98:00.0";
  h.pci.push_back(Fn("0000:19:00.0", s0 + "/0000:17:01.0", 0x030200, "10de", 0));
  h.pci.push_back(Fn("0000:1a:00.0", s0 + "/0000:17:02.0", 0x020000, "15b3", 0));
  h.pci.push_back(Fn("0000:9b:00.0", s1 + "/0000:99:01.0", 0x030200, "10de", 1));
  h.pci.push_back(Fn("0000:9c:00.0", s1 + "/0000:99:02.0", 0x020000, "15b3", 1));
  h.pci.push_back(Fn("0000:9d:00.0", s1 + "/0000:99:03.0", 0x030200, "10de", 1));
  return h;
}

TEST(TopologyTest, EveryGpuNicPairGpuMajor) {
  TopologyFacts t = ComputeTopology(RailHost());
  ASSERT_EQ(t.gpus.size(), 3u);
  EXPECT_EQ(t.gpus[0].pci_address, "0000:19:00.0");
  EXPECT_EQ(t.gpus[2].pci_address, "0000:9d:00.0");
  ASSERT_EQ(t.links.size(), 6u);
  EXPECT_EQ(t.links[0].nic, "0000:1a:00.0");
  EXPECT_EQ(t.links[0].level, PcieLevel::kPix);
  EXPECT_EQ(t.links[1].level, PcieLevel::kSys);
  EXPECT_EQ(t.links[3].level, PcieLevel::kPix);
}

NicSpec Near(int gpu, bool allow_remote = false) {
  NicSpec n;
  n.name = "gpu" + std::to_string(gpu + 1) + "-nic";
  n.selector.near_gpu = gpu;
  n.selector.allow_remote = allow_remote;
  return n;
}

TEST(NearGpuTest, PicksTheNicUnderTheSameSwitch) {
  HostFacts h = RailHost();
  auto pfs = SelectPfs(Near(1), h);
  ASSERT_EQ(pfs.size(), 1u);
  EXPECT_EQ(pfs[0]->pci_address, "0000:9c:00.0");
  NicSpec other = Near(0);
  other.selector.vendor = "8086";  // other fields still filter
  EXPECT_TRUE(SelectPfs(other, h).empty());
}

TEST(NearGpuTest, TiesGoToTheLowerPciAddress) {
  HostFacts h = RailHost();
  PciFunction second = h.pci[1];
  second.pci_address = "0000:1b:00.0";
  second.sysfs_path = "/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:03.0/0000:1b:00.0";
  h.pci.insert(h.pci.begin() + 2, second);
  NearGpuChoice c = ChooseNearGpu(Near(0).selector, h);
  ASSERT_NE(c.pf, nullptr);
  EXPECT_EQ(c.pf->pci_address, "0000:1a:00.0");
  EXPECT_EQ(c.level, PcieLevel::kPix);
}

TEST(NearGpuTest, RemoteOnlyWithAllowRemote) {
  HostFacts h = RailHost();
  h.pci.erase(h.pci.begin() + 1);  // GPU 0 loses its NIC: nearest is across NUMA
  EXPECT_TRUE(SelectPfs(Near(0), h).empty());
  auto pfs = SelectPfs(Near(0, /*allow_remote=*/true), h);
  ASSERT_EQ(pfs.size(), 1u);
  EXPECT_EQ(pfs[0]->pci_address, "0000:9c:00.0");
  DesiredState d;
  d.nics = {Near(0)};
  auto problems = CheckNearGpu(d, h);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].first, "spec.nics[0].nicSelector.nearGpu");
  EXPECT_NE(problems[0].second.find("0000:9c:00.0 at level SYS"), std::string::npos)
      << problems[0].second;
  EXPECT_NE(problems[0].second.find("allowRemote: true"), std::string::npos);
  d.nics = {Near(0, true)};
  EXPECT_TRUE(CheckNearGpu(d, h).empty());
}

TEST(NearGpuTest, ConflictsAndMissingGpusAreErrors) {
  HostFacts h = RailHost();
  DesiredState d;
  d.nics = {Near(0), Near(1), Near(2), Near(0), Near(7)};
  auto problems = CheckNearGpu(d, h);
  ASSERT_EQ(problems.size(), 3u);
  // GPU 2 shares GPU 1's switch and NIC.
  EXPECT_EQ(problems[0].first, "spec.nics[2].nicSelector.nearGpu");
  EXPECT_NE(problems[0].second.find("is also the nearest to GPU 1 (0000:9b:00.0), claimed by "
                                    "spec.nics[1] (gpu2-nic): two GPUs share one NIC"),
            std::string::npos)
      << problems[0].second;
  EXPECT_EQ(problems[1].first, "spec.nics[3].nicSelector.nearGpu");
  EXPECT_NE(problems[1].second.find("GPU 0 (0000:19:00.0) is already claimed by spec.nics[0]"),
            std::string::npos)
      << problems[1].second;
  EXPECT_EQ(problems[2].second,
            "GPU 7 does not exist: this host has 3 GPUs (0-2, in PCI address order)");
}

}  // namespace
}  // namespace provisioner
