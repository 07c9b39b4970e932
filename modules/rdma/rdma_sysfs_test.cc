#include "modules/rdma/rdma_sysfs.h"

#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/sim/sim_host_fs.h"
#include "test/support/files.h"

namespace provisioner::rdma {
namespace {

using ::provisioner::testing::ExtractedHostTree;
using ::testing::ElementsAre;

void Write(const std::string& path, const std::string& text) {
  ASSERT_EQ(std::system(("mkdir -p '" + path.substr(0, path.rfind('/')) + "'").c_str()), 0);
  std::ofstream out(path);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

TEST(RdmaParse, EnumsLidsAndGids) {
  EXPECT_EQ(StripEnumPrefix("4: ACTIVE"), "ACTIVE");
  EXPECT_EQ(StripEnumPrefix("5: LinkUp\n"), "LinkUp");
  EXPECT_EQ(StripEnumPrefix("ACTIVE"), "ACTIVE");
  EXPECT_EQ(ParseHexLid("0x5"), 5);
  EXPECT_EQ(ParseHexLid("0x0"), 0);
  EXPECT_EQ(ParseHexLid("junk"), std::nullopt);
  EXPECT_EQ(ParseHexLid(""), std::nullopt);
  EXPECT_TRUE(IsEmptyGidSlot("0000:0000:0000:0000:0000:0000:0000:0000"));
  // An IB port's unused slot (mlx4, qib): the subnet prefix, no interface ID.
  EXPECT_TRUE(IsEmptyGidSlot("fe80:0000:0000:0000:0000:0000:0000:0000"));
  EXPECT_FALSE(IsEmptyGidSlot("fe80:0000:0000:0000:0e42:a1ff:fe5b:7c2e"));
  EXPECT_FALSE(IsEmptyGidSlot("0000:0000:0000:0000:0000:ffff:0a00:0001"));
  EXPECT_FALSE(IsEmptyGidSlot("not a gid"));
  EXPECT_EQ(Ipv4FromGid("0000:0000:0000:0000:0000:ffff:ac51:0077"), "172.81.0.119");
  EXPECT_EQ(Ipv4FromGid("fe80:0000:0000:0000:0e42:a1ff:fe5b:7c2e"), std::nullopt);
  EXPECT_EQ(Ipv6FromGid("fe80:0000:0000:0000:0e42:a1ff:fe5b:7c2e"), "fe80::e42:a1ff:fe5b:7c2e");
  EXPECT_EQ(Ipv6FromGid("fd00:0000:0000:0000:0000:0000:0000:0001"), "fd00::1");
}

TEST(RdmaParse, RoceV2AddressesAreTheV2SlotsPerNetdev) {
  std::vector<RdmaGid> gids = {
      {0, "fe80:0000:0000:0000:0e42:a1ff:fe5b:7c2e", "IB/RoCE v1", "eth0"},
      {1, "fe80:0000:0000:0000:0e42:a1ff:fe5b:7c2e", "RoCE v2", "eth0"},
      {2, "0000:0000:0000:0000:0000:ffff:0a00:0001", "IB/RoCE v1", "eth0"},
      {5, "0000:0000:0000:0000:0000:ffff:0a00:0001", "RoCE v2", "eth0"},
      {6, "0000:0000:0000:0000:0000:ffff:0a00:0002", "RoCE v2", ""},  // no netdev: not usable
      {7, "fd00:0000:0000:0000:0000:0000:0000:0007", "RoCE v2", "eth0"},
      {8, "0000:0000:0000:0000:0000:ffff:0a00:0009", "", "eth0"},  // type unreadable
  };
  std::vector<RoceAddress> v2 = RoceV2Addresses(gids);
  ASSERT_EQ(v2.size(), 3u);
  EXPECT_EQ(v2[0].address, "10.0.0.1");
  EXPECT_EQ(v2[0].family, 4);
  EXPECT_EQ(v2[0].gid_index, 5);
  EXPECT_EQ(v2[1].address, "fe80::e42:a1ff:fe5b:7c2e");
  EXPECT_EQ(v2[1].gid_index, 1);
  EXPECT_EQ(v2[2].address, "fd00::7");
  EXPECT_EQ(v2[2].gid_index, 7);
}

TEST(RdmaParse, NetnsModeFromParamAndModprobe) {
  EXPECT_EQ(NetnsModeFromParam("Y\n"), "shared");
  EXPECT_EQ(NetnsModeFromParam("N"), "exclusive");
  EXPECT_EQ(NetnsModeFromParam("1"), "shared");
  EXPECT_EQ(NetnsModeFromParam("0"), "exclusive");
  EXPECT_EQ(NetnsModeFromParam("maybe"), std::nullopt);
  EXPECT_EQ(NetnsModeFromModprobe("options ib_core netns_mode=0\n"), "exclusive");
  EXPECT_EQ(NetnsModeFromModprobe("options ib_core netns_mode=0\noptions ib_core netns_mode=1\n"),
            "shared");
  EXPECT_EQ(NetnsModeFromModprobe("# options ib_core netns_mode=0\noptions mlx5_core x=1\n"),
            std::nullopt);
  EXPECT_EQ(NetnsModeFromModprobe("options  ib_core  a=1 netns_mode=N  # c\n"), "exclusive");
}

TEST(RdmaParse, EditModprobeKeepsOtherLinesAndIsIdempotent) {
  const std::string seed = "# keep me\noptions ib_core recv_queue_size=512\nblacklist foo\n";
  std::string once = EditModprobeNetnsMode(seed, "exclusive");
  EXPECT_EQ(once, seed + "options ib_core netns_mode=0\n");
  EXPECT_EQ(EditModprobeNetnsMode(once, "exclusive"), once);
  // Shared: the option goes, the line's other options and every other line stay.
  EXPECT_EQ(EditModprobeNetnsMode("a\noptions ib_core netns_mode=0 x=1\nb\n", "shared"),
            "a\noptions ib_core x=1\nb\n");
  EXPECT_EQ(EditModprobeNetnsMode(once, "shared"), seed);
  EXPECT_EQ(EditModprobeNetnsMode("options ib_core netns_mode=1\n", "exclusive"),
            "options ib_core netns_mode=0\n");
  EXPECT_EQ(EditModprobeNetnsMode("", "shared"), "");
  EXPECT_EQ(EditModprobeNetnsMode("", "exclusive"), "options ib_core netns_mode=0\n");
  // Found by the sysfs_values fuzzer: a netns_mode inside a trailing comment
  // is not an option; the edit must set the mode the reader then sees.
  std::string commented = "options ib_core x=1 # netns_mode=1\n";
  std::string edited = EditModprobeNetnsMode(commented, "exclusive");
  EXPECT_EQ(NetnsModeFromModprobe(edited), "exclusive") << edited;
  EXPECT_EQ(EditModprobeNetnsMode(edited, "exclusive"), edited);
  EXPECT_EQ(EditModprobeNetnsMode("options ib_core netns_mode=0 # why\n", "shared"), "# why\n");
  EXPECT_EQ(EditModprobeNetnsMode("options ib_core netns_mode=1 a=2 # why\n", "exclusive"),
            "options ib_core netns_mode=0 a=2 # why\n");
}

TEST(RdmaParse, KernelAndOfedVersions) {
  EXPECT_EQ(KernelVersion("6.1.0-18-amd64"), std::make_pair(6, 1));
  EXPECT_EQ(KernelVersion("4.18.0-305.el8.x86_64"), std::make_pair(4, 18));
  EXPECT_EQ(KernelVersion("x"), std::nullopt);
  EXPECT_EQ(OfedVersionFrom("#!/bin/bash\necho MLNX_OFED_LINUX-5.8-1.0.1.1:\n"), "5.8-1.0.1.1");
  EXPECT_EQ(OfedVersionFrom("nothing"), "");
}

TEST(RdmaDiscover, RoceTree) {
  auto fs = NewLocalHostFs(ExtractedHostTree("cx5-roce"));
  auto devs = ReadRdmaDevices(*fs);
  ASSERT_TRUE(devs.ok()) << devs.status().message();
  ASSERT_EQ(devs->size(), 2u);
  const RdmaDevice& d = (*devs)[0];
  EXPECT_EQ(d.name, "mlx5_0");
  EXPECT_EQ(d.pci_address, "0000:af:00.0");
  EXPECT_FALSE(d.is_vf);
  EXPECT_EQ(d.node_guid, "0c42:a103:005b:7c2e");
  EXPECT_EQ(d.fw_ver, "16.35.2000");
  ASSERT_EQ(d.ports.size(), 1u);
  const RdmaPort& p = d.ports[0];
  EXPECT_EQ(p.link_layer, "Ethernet");
  EXPECT_EQ(p.state, "ACTIVE");
  EXPECT_EQ(p.phys_state, "LinkUp");
  EXPECT_EQ(p.netdev, "ens6f0np0");
  ASSERT_EQ(p.gids.size(), 4u);  // 16 slots, 12 empty skipped
  EXPECT_EQ(p.gids[3].index, 3);
  EXPECT_EQ(p.gids[3].type, "RoCE v2");
  EXPECT_EQ(p.gids[3].netdev, "ens6f0np0");
  bool v4 = false;
  for (const auto& a : p.roce_v2) v4 = v4 || (a.address == "172.81.0.119" && a.gid_index == 3);
  EXPECT_TRUE(v4);
}

TEST(RdmaDiscover, IbTree) {
  auto fs = NewLocalHostFs(ExtractedHostTree("cx5-ib"));
  auto devs = ReadRdmaDevices(*fs);
  ASSERT_TRUE(devs.ok()) << devs.status().message();
  ASSERT_EQ(devs->size(), 1u);
  const RdmaPort& p = (*devs)[0].ports.at(0);
  EXPECT_EQ(p.link_layer, "InfiniBand");
  EXPECT_EQ(p.lid, 5);
  EXPECT_EQ(p.sm_lid, 1);
  EXPECT_EQ(p.netdev, "ibs5f0");  // IPoIB
  ASSERT_EQ(p.gids.size(), 1u);
  EXPECT_EQ(p.gids[0].netdev, "");  // no ndevs on InfiniBand
  EXPECT_TRUE(p.roce_v2.empty());
}

TEST(RdmaDiscover, VfTreeMarksVfs) {
  auto fs = NewLocalHostFs(ExtractedHostTree("cx5-roce-vfs"));
  auto devs = ReadRdmaDevices(*fs);
  ASSERT_TRUE(devs.ok()) << devs.status().message();
  int vfs = 0;
  for (const auto& d : *devs) {
    vfs += d.is_vf;
    if (d.name == "mlx5_0") {
      EXPECT_FALSE(d.is_vf);
    }
  }
  EXPECT_EQ(vfs, 4);
}

// Real sysfs fails EINVAL reading gid_attrs of a slot being (re)filled; the
// simulator reproduces it for a used slot whose attribute files are gone.
TEST(RdmaDiscover, ToleratesEinvalGidAttributes) {
  std::string root = ExtractedHostTree("cx5-roce");
  const std::string port = root + "/sys/class/infiniband/mlx5_0/ports/1";
  ASSERT_EQ(std::remove((port + "/gid_attrs/types/2").c_str()), 0);
  ASSERT_EQ(std::remove((port + "/gid_attrs/ndevs/2").c_str()), 0);
  provisioner::testing::SimOptions opt;
  opt.gid_attrs_einval = true;
  provisioner::testing::SimulatedHostFs fs(root, opt);
  auto einval = fs.ReadAttr("/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/2");
  ASSERT_FALSE(einval.ok());
  EXPECT_EQ(einval.status().err(), EINVAL);
  auto devs = ReadRdmaDevices(fs);
  ASSERT_TRUE(devs.ok()) << devs.status().message();
  const RdmaPort& p = (*devs)[0].ports.at(0);
  ASSERT_EQ(p.gids.size(), 4u);
  EXPECT_EQ(p.gids[2].type, "");
  EXPECT_EQ(p.gids[2].netdev, "");
  EXPECT_EQ(p.gids[3].type, "RoCE v2");  // the rest of the table is read
}

TEST(RdmaDiscover, NetdevInAnotherNamespaceIsNoPortNetdev) {
  std::string root = ExtractedHostTree("cx5-roce");
  // What a container sees in shared mode without the PF netdev: the RDMA
  // device and its GID table (naming the netdev), no netdev.
  auto fs = NewLocalHostFs(root);
  auto dev = fs->Resolve("/sys/class/net/ens6f0np0");
  ASSERT_TRUE(dev.ok());
  ASSERT_EQ(
      std::system(("rm -rf '" + root + *dev + "' '" + root + "/sys/class/net/ens6f0np0'").c_str()),
      0);
  auto devs = ReadRdmaDevices(*fs);
  ASSERT_TRUE(devs.ok());
  EXPECT_EQ((*devs)[0].ports[0].netdev, "");
  EXPECT_EQ((*devs)[0].ports[0].gids[0].netdev, "ens6f0np0");
  EXPECT_EQ((*devs)[1].ports[0].netdev, "ens6f1np1");

  // Shared mode in a pod: a macvlan (net1) on the PF got its own GIDs; it is
  // the port's netdev here, with its RoCE v2 index.
  const std::string port = root + "/sys/class/infiniband/mlx5_0/ports/1";
  Write(port + "/gids/5", "0000:0000:0000:0000:0000:ffff:ac51:0a01\n");
  Write(port + "/gid_attrs/types/5", "RoCE v2\n");
  Write(port + "/gid_attrs/ndevs/5", "net1\n");
  Write(root + "/sys/devices/virtual/net/net1/ifindex", "7\n");
  ASSERT_EQ(std::system(
                ("ln -s ../../devices/virtual/net/net1 '" + root + "/sys/class/net/net1'").c_str()),
            0);
  auto pod = ReadRdmaDevices(*fs);
  ASSERT_TRUE(pod.ok());
  const RdmaPort& p = (*pod)[0].ports[0];
  EXPECT_EQ(p.netdev, "net1");
  bool v2 = false;
  for (const auto& a : p.roce_v2)
    v2 = v2 || (a.netdev == "net1" && a.address == "172.81.10.1" && a.gid_index == 5);
  EXPECT_TRUE(v2);
}

TEST(RdmaDiscover, NetnsModeAndPersistentSetting) {
  std::string root = ExtractedHostTree("cx5-roce");
  auto fs = NewLocalHostFs(root);
  EXPECT_EQ(ReadNetnsModeParam(*fs), "shared");
  RdmaFacts f;
  ReadPersistentNetnsMode(*fs, f);
  EXPECT_EQ(f.persistent_netns_mode, std::nullopt);
  // Each step writes one modprobe.d file over the ones before; then the mode
  // and the file it comes from ("": not checked).
  struct Step {
    std::string why, path, text;
    std::string mode, source;
  };
  const std::string etc_local = "/etc/modprobe.d/zz-local.conf";
  const Step steps[] = {
      {"ib_core.conf sets it", "/etc/modprobe.d/ib_core.conf", "options ib_core netns_mode=0\n",
       "exclusive", "/etc/modprobe.d/ib_core.conf"},
      {"a later file wins, as modprobe concatenates options in file-name order", etc_local,
       "options ib_core netns_mode=1\n", "shared", etc_local},
      {"as modprobe (libkmod) reads it: \"ib-core\" is ib_core", etc_local,
       "options ib-core netns_mode=0\n", "exclusive", etc_local},
      {"a trailing backslash continues the line", etc_local, "options ib_core \\\n  netns_mode=1\n",
       "shared", etc_local},
      {"/lib/modprobe.d is read too, and a same-named file in /etc hides it",
       "/lib/modprobe.d/zz-local.conf", "options ib_core netns_mode=0\n", "shared", ""},
  };
  for (const Step& step : steps) {
    SCOPED_TRACE(step.why);
    Write(root + step.path, step.text);
    RdmaFacts read;
    ReadPersistentNetnsMode(*fs, read);
    EXPECT_EQ(read.persistent_netns_mode, step.mode);
    if (!step.source.empty()) {
      EXPECT_EQ(read.persistent_netns_source, step.source);
    }
  }
  ASSERT_EQ(std::system(("rm -rf '" + root + "/sys/module/ib_core/parameters'").c_str()), 0);
  EXPECT_EQ(ReadNetnsModeParam(*fs), std::nullopt);
}

TEST(RdmaDiscover, OfedMarkers) {
  std::string root = ExtractedHostTree("cx5-roce");
  auto fs = NewLocalHostFs(root);
  RdmaFacts none;
  ReadOfed(*fs, none);
  EXPECT_FALSE(none.ofed);
  ASSERT_EQ(
      std::system(("mkdir -p '" + root + "/usr/bin' '" + root + "/sys/module/mlx_compat'").c_str()),
      0);
  Write(root + "/usr/bin/ofed_info", "#!/bin/bash\necho MLNX_OFED_LINUX-4.7-3.2.9.0:\n");
  RdmaFacts f;
  ReadOfed(*fs, f);
  EXPECT_TRUE(f.ofed);
  EXPECT_EQ(f.ofed_version, "4.7-3.2.9.0");
}

TEST(RdmaDiscover, AddressesFromProc) {
  std::string root = ExtractedHostTree("cx5-roce");
  Write(root + "/proc/net/if_inet6",
        "fe800000000000000e42a1fffe5b7c2e 03 40 20 80 ens6f0np0\n"
        "00000000000000000000000000000001 01 80 10 80       lo\n");
  Write(root + "/proc/net/route",
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
        "eno1\t00000000\t0100A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
        "ens6f0np0\t000051AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n"
        "eno1\t0000A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n");
  Write(root + "/proc/net/fib_trie",
        "Main:\n  +-- 0.0.0.0/0 3 0 5\n     |-- 0.0.0.0\n        /0 universe UNICAST\n"
        "Local:\n  +-- 0.0.0.0/0 3 0 5\n     +-- 127.0.0.0/8 2 0 2\n        |-- 127.0.0.1\n"
        "           /32 host LOCAL\n     |-- 172.81.0.119\n        /32 host LOCAL\n"
        "     |-- 172.81.255.255\n        /32 link BROADCAST\n     |-- 192.168.0.5\n"
        "        /32 host LOCAL\n");
  auto fs = NewLocalHostFs(root);
  RdmaFacts f;
  ReadAddressesFromProc(*fs, f);
  EXPECT_TRUE(f.addresses_known);
  EXPECT_THAT(f.addresses["ens6f0np0"].ipv4, ElementsAre("172.81.0.119"));
  EXPECT_THAT(f.addresses["ens6f0np0"].ipv6, ElementsAre("fe80::e42:a1ff:fe5b:7c2e"));
  EXPECT_THAT(f.addresses["eno1"].ipv4, ElementsAre("192.168.0.5"));
  EXPECT_EQ(f.addresses.count("lo"), 1u);  // ::1 only; 127.0.0.1 has no link route
  EXPECT_TRUE(f.addresses["lo"].ipv4.empty());
}

}  // namespace
}  // namespace provisioner::rdma
