#include "test/support/host_presets.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace provisioner::testing {
namespace {

std::string Hex2(int v) {
  char buf[8];
  snprintf(buf, sizeof buf, "%02x", v);
  return buf;
}

ModuleSpec Mod(std::string name, int size, std::vector<std::string> used_by = {}) {
  ModuleSpec m;
  m.name = std::move(name);
  m.size = size;
  m.used_by = std::move(used_by);
  return m;
}

std::vector<ModuleSpec> RdmaModules(bool ipoib) {
  // /proc/modules order: most recently loaded first.
  std::vector<ModuleSpec> m;
  m.push_back(Mod("rdma_ucm", 32768));
  m.push_back(Mod("rdma_cm", 139264, {"rdma_ucm"}));
  m.push_back(Mod("iw_cm", 61440, {"rdma_cm"}));
  m.push_back(Mod("ib_cm", 135168, {"rdma_cm"}));
  m.push_back(Mod("ib_umad", 40960));
  if (ipoib) m.push_back(Mod("ib_ipoib", 151552));
  m.push_back(Mod("mlx5_ib", 446464));
  m.push_back(Mod("ib_uverbs", 184320, {"rdma_ucm", "mlx5_ib"}));
  std::vector<std::string> core_users = {"rdma_cm", "iw_cm", "ib_cm", "ib_umad"};
  if (ipoib) core_users.push_back("ib_ipoib");
  for (const char* u : {"mlx5_ib", "ib_uverbs", "rdma_ucm"}) core_users.push_back(u);
  ModuleSpec core = Mod("ib_core", 450560, core_users);
  core.parameters = {{"netns_mode", "Y"}};
  m.push_back(core);
  m.push_back(Mod("mlx5_core", 2035712, {"mlx5_ib"}));
  m.push_back(Mod("mlxfw", 36864, {"mlx5_core"}));
  m.push_back(Mod("psample", 20480, {"mlx5_core"}));
  m.push_back(Mod("tls", 135168, {"mlx5_core"}));
  m.push_back(Mod("pci_hyperv_intf", 16384, {"mlx5_core"}));
  return m;
}

PciFunctionSpec HostBridge(const std::string& bdf, int numa) {
  PciFunctionSpec f;
  f.bdf = bdf;
  f.vendor = 0x8086;
  f.device = 0x2020;  // Sky Lake-E DMI3 Registers
  f.class_code = 0x060000;
  f.subsystem_vendor = 0x15d9;
  f.subsystem_device = 0x095d;
  f.revision = 0x04;
  f.numa_node = numa;
  f.link_speed = "Unknown";
  f.link_width = 0;
  f.iommu_group = 0;
  return f;
}

PciFunctionSpec RootPort(const std::string& bdf, uint16_t device, int secondary, int numa, int irq,
                         int group) {
  PciFunctionSpec f;
  f.bdf = bdf;
  f.vendor = 0x8086;
  f.device = device;  // 0x2030: Sky Lake-E PCIe Root Port A; 0xa190: C620 PCH root port
  f.class_code = 0x060400;
  f.subsystem_vendor = 0x15d9;
  f.subsystem_device = 0x095d;
  f.revision = 0x04;
  f.irq = irq;
  f.numa_node = numa;
  f.driver = "pcieport";
  f.secondary_bus = secondary;
  f.subordinate_bus = secondary;
  f.iommu_group = group;
  return f;
}

PciFunctionSpec I210(const std::string& bdf, const std::string& parent, int group) {
  PciFunctionSpec f;
  f.bdf = bdf;
  f.parent = parent;
  f.vendor = 0x8086;
  f.device = 0x1533;
  f.class_code = 0x020000;
  f.subsystem_vendor = 0x15d9;
  f.subsystem_device = 0x1533;
  f.revision = 0x03;
  f.irq = 16;
  f.numa_node = 0;
  f.driver = "igb";
  f.bar0 = 0xc5e00000;
  f.bar0_size = 0x100000;
  f.link_speed = "2.5 GT/s PCIe";
  f.link_width = 1;
  f.iommu_group = group;
  return f;
}

NetdevSpec Netdev(std::string name, std::string pci, std::string mac, int ifindex, int speed,
                  int type = 1, int mtu = 1500) {
  NetdevSpec n;
  n.name = std::move(name);
  n.pci = std::move(pci);
  n.mac = std::move(mac);
  n.ifindex = ifindex;
  n.speed = speed;
  n.type = type;
  n.mtu = mtu;
  return n;
}

PciFunctionSpec Cx5(const std::string& bdf, const std::string& parent, uint32_t class_code, int irq,
                    uint64_t bar0, int total_vfs, int offset, int group, int numa) {
  PciFunctionSpec f;
  f.bdf = bdf;
  f.parent = parent;
  f.vendor = 0x15b3;
  f.device = 0x1017;
  f.class_code = class_code;
  f.subsystem_vendor = 0x15b3;
  f.subsystem_device = 0x0007;
  f.revision = 0x00;
  f.irq = irq;
  f.numa_node = numa;
  f.driver = "mlx5_core";
  f.bar0 = bar0;
  f.bar0_size = 0x2000000;
  SriovSpec s;
  s.total_vfs = total_vfs;
  s.offset = offset;
  s.stride = 1;
  s.vf_device = 0x1018;
  s.vf_bar_size = 0x100000;
  f.sriov = s;
  f.iommu_group = group;
  return f;
}

RdmaDeviceSpec RoceDevice(const std::string& name, const std::string& pci, const std::string& mac,
                          const std::string& sys_guid, const std::string& ndev,
                          const std::string& ipv4, int uverbs) {
  RdmaDeviceSpec r;
  r.name = name;
  r.pci = pci;
  r.node_guid = GuidFromMac(mac);
  r.sys_image_guid = sys_guid;
  r.fw_ver = "16.35.2000";
  r.hca_type = "MT4119";
  r.board_id = "MT_0000000012";
  r.uverbs = uverbs;
  RdmaPortSpec p;
  p.link_layer = "Ethernet";
  p.rate = "100 Gb/sec (4X EDR)";
  p.cap_mask = "0x00010000";
  std::string ll = LinkLocalGidFromMac(mac);
  std::string v4 = Ipv4MappedGid(ipv4);
  p.gids = {{0, ll, "IB/RoCE v1", ndev},
            {1, ll, "RoCE v2", ndev},
            {2, v4, "IB/RoCE v1", ndev},
            {3, v4, "RoCE v2", ndev}};
  r.ports = {p};
  return r;
}

}  // namespace

HostSpec Cx5RoceHost() {
  HostSpec h;
  h.hostname = "worker1";
  h.modules = RdmaModules(/*ipoib=*/false);
  for (auto m : {Mod("nvidia", 56856576), Mod("igb", 286720), Mod("dca", 16384, {"igb"}),
                 Mod("i2c_algo_bit", 16384, {"igb"})}) {
    h.modules.push_back(m);
  }
  h.pci.push_back(HostBridge("0000:00:00.0", 0));
  h.pci.push_back(RootPort("0000:00:1c.0", 0xa190, 0x02, 0, 25, 1));
  h.pci.push_back(I210("0000:02:00.0", "0000:00:1c.0", 2));
  h.pci.push_back(RootPort("0000:17:00.0", 0x2030, 0x18, 0, 26, 3));
  PciFunctionSpec gpu;
  gpu.bdf = "0000:18:00.0";
  gpu.parent = "0000:17:00.0";
  gpu.vendor = 0x10de;
  gpu.device = 0x2330;
  gpu.class_code = 0x030200;
  gpu.subsystem_vendor = 0x10de;
  gpu.subsystem_device = 0x16c1;
  gpu.revision = 0xa1;
  gpu.irq = 18;
  gpu.numa_node = 0;
  gpu.driver = "nvidia";
  gpu.bar0 = 0xa8000000;
  gpu.bar0_size = 0x1000000;
  gpu.link_speed = "16.0 GT/s PCIe";
  gpu.iommu_group = 4;
  h.pci.push_back(gpu);
  h.pci.push_back(RootPort("0000:ae:00.0", 0x2030, 0xaf, 1, 28, 5));
  h.pci.push_back(
      Cx5("0000:af:00.0", "0000:ae:00.0", 0x020000, 38, 0x3bffe000000ULL, 127, 2, 6, 1));
  h.pci.push_back(
      Cx5("0000:af:00.1", "0000:ae:00.0", 0x020000, 39, 0x3bff0000000ULL, 127, 128, 7, 1));
  h.netdevs.push_back(Netdev("eno1", "0000:02:00.0", "3c:ec:ef:12:34:56", 2, 1000));
  NetdevSpec p0 = Netdev("ens6f0np0", "0000:af:00.0", "0c:42:a1:5b:7c:2e", 3, 100000);
  p0.phys_port_name = "p0";
  NetdevSpec p1 = Netdev("ens6f1np1", "0000:af:00.1", "0c:42:a1:5b:7c:2f", 4, 100000);
  p1.phys_port_name = "p1";
  p1.dev_port = 0;
  h.netdevs.push_back(p0);
  h.netdevs.push_back(p1);
  h.rdma.push_back(RoceDevice("mlx5_0", "0000:af:00.0", "0c:42:a1:5b:7c:2e", "0c42:a103:005b:7c2e",
                              "ens6f0np0", "172.81.0.119", 0));
  h.rdma.push_back(RoceDevice("mlx5_1", "0000:af:00.1", "0c:42:a1:5b:7c:2f", "0c42:a103:005b:7c2e",
                              "ens6f1np1", "172.82.0.119", 1));
  return h;
}

HostSpec Cx5IbHost() {
  HostSpec h;
  h.hostname = "ib-worker1";
  h.modules = RdmaModules(/*ipoib=*/true);
  for (auto m :
       {Mod("igb", 286720), Mod("dca", 16384, {"igb"}), Mod("i2c_algo_bit", 16384, {"igb"})}) {
    h.modules.push_back(m);
  }
  h.pci.push_back(HostBridge("0000:00:00.0", 0));
  h.pci.push_back(RootPort("0000:00:1c.0", 0xa190, 0x02, 0, 25, 1));
  h.pci.push_back(I210("0000:02:00.0", "0000:00:1c.0", 2));
  h.pci.push_back(RootPort("0000:85:00.0", 0x2030, 0x86, 1, 27, 3));
  h.pci.push_back(Cx5("0000:86:00.0", "0000:85:00.0", 0x020700, 37, 0x39ffe000000ULL, 16, 1, 4, 1));
  h.netdevs.push_back(Netdev("eno1", "0000:02:00.0", "3c:ec:ef:12:34:60", 2, 1000));
  const std::string guid = "ec0d:9a03:008a:bcde";
  h.netdevs.push_back(Netdev("ibs5f0", "0000:86:00.0",
                             "00:00:10:87:fe:80:00:00:00:00:00:00:ec:0d:9a:03:00:8a:bc:de", 3, -1,
                             32, 2044));
  RdmaDeviceSpec r;
  r.name = "mlx5_0";
  r.pci = "0000:86:00.0";
  r.node_guid = guid;
  r.sys_image_guid = guid;
  r.fw_ver = "16.35.2000";
  r.hca_type = "MT4119";
  r.board_id = "MT_0000000010";
  r.uverbs = 0;
  RdmaPortSpec p;
  p.link_layer = "InfiniBand";
  p.rate = "100 Gb/sec (4X EDR)";
  p.lid = "0x5";
  p.sm_lid = "0x1";
  p.cap_mask = "0xa651e848";
  p.pkey_table_size = 16;
  p.gids = {{0, IbGidFromGuid(guid), "IB/RoCE v1", ""}};
  r.ports = {p};
  h.rdma.push_back(r);
  return h;
}

HostSpec ScaledRoceHost(int pfs) {
  pfs = std::clamp(pfs, 1, 118);
  HostSpec h;
  h.hostname = "bench";
  h.modules = RdmaModules(/*ipoib=*/false);
  h.pci.push_back(HostBridge("0000:00:00.0", 0));
  int group = 1;
  for (int i = 0; i < pfs; ++i) {
    int rp_bus = 0x10 + 2 * i;
    int bus = rp_bus + 1;
    int numa = i % 2;
    std::string rp = "0000:" + Hex2(rp_bus) + ":00.0";
    std::string pf = "0000:" + Hex2(bus) + ":00.0";
    h.pci.push_back(RootPort(rp, 0x2030, bus, numa, 24 + i % 8, group++));
    PciFunctionSpec f = Cx5(pf, rp, 0x020000, 32 + i % 64,
                            0x380000000000ULL + (uint64_t{1} << 32) * i, 127, 1, group++, numa);
    h.pci.push_back(f);
    char mac[32];
    snprintf(mac, sizeof mac, "0c:42:a1:%02x:%02x:00", (i >> 8) & 0xff, i & 0xff);
    std::string ifname = "enp" + std::to_string(bus) + "s0f0np0";
    NetdevSpec n = Netdev(ifname, pf, mac, 2 + i, 100000);
    n.phys_port_name = "p0";
    h.netdevs.push_back(n);
    char ip[32];
    snprintf(ip, sizeof ip, "172.%d.0.1", 16 + i % 200);
    h.rdma.push_back(
        RoceDevice("mlx5_" + std::to_string(i), pf, mac, GuidFromMac(mac), ifname, ip, i));
  }
  return h;
}

std::vector<std::string> PresetNames() { return {"cx5-roce", "cx5-ib", "scaled-<P>"}; }

bool PresetByName(const std::string& name, HostSpec* out) {
  if (name == "cx5-roce") {
    *out = Cx5RoceHost();
    return true;
  }
  if (name == "cx5-ib") {
    *out = Cx5IbHost();
    return true;
  }
  if (name.rfind("scaled-", 0) == 0) {
    int p = std::atoi(name.c_str() + 7);
    if (p < 1 || p > 118) return false;
    *out = ScaledRoceHost(p);
    return true;
  }
  return false;
}

}  // namespace provisioner::testing
