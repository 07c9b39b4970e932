#include "test/support/host_presets.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace provisioner::testing {
namespace {

std::string Hex2(int v) {
  char buf[16];  // room for any int: -c opt checks the bound
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

// What every function of one device model shares: IDs, class, revision,
// driver, the size of BAR0 and the link.
struct Model {
  uint16_t vendor;
  uint16_t device;
  uint32_t class_code;
  uint16_t subsystem_vendor;
  uint16_t subsystem_device;
  uint8_t revision;
  const char* driver;  // "" = unbound
  uint64_t bar0_size;
  const char* link_speed;
  int link_width;
};

// Sky Lake-E DMI3 Registers (the host bridge), its PCIe root ports (device
// 0x2030; 0xa190 the C620 PCH's), an Intel I210 NIC (igb), a ConnectX-5
// (15b3:1017; class per card), an H100 and the Broadcom PEX890xx switch
// ports of the GPU boards.
constexpr Model kHostBridge = {0x8086, 0x2020, 0x060000, 0x15d9, 0x095d, 0x04, "", 0, "Unknown", 0};
constexpr Model kRootPort = {0x8086, 0x2030,     0x060400, 0x15d9,          0x095d,
                             0x04,   "pcieport", 0,        "8.0 GT/s PCIe", 16};
constexpr Model kI210 = {0x8086, 0x1533, 0x020000, 0x15d9,          0x1533,
                         0x03,   "igb",  0x100000, "2.5 GT/s PCIe", 1};
constexpr Model kCx5 = {0x15b3, 0x1017,      0x020000,  0x15b3,          0x0007,
                        0x00,   "mlx5_core", 0x2000000, "8.0 GT/s PCIe", 16};
constexpr Model kH100 = {0x10de, 0x2330,   0x030200,  0x10de,           0x16c1,
                         0xa1,   "nvidia", 0x1000000, "32.0 GT/s PCIe", 16};
constexpr Model kPex890xx = {0x1000, 0xc030,     0x060400, 0x1000,           0x0000,
                             0xb0,   "pcieport", 0,        "32.0 GT/s PCIe", 16};

PciFunctionSpec Function(const Model& m, const std::string& bdf, const std::string& parent,
                         int numa, int irq, int group) {
  PciFunctionSpec f;
  // What it is,
  f.vendor = m.vendor;
  f.device = m.device;
  f.class_code = m.class_code;
  f.subsystem_vendor = m.subsystem_vendor;
  f.subsystem_device = m.subsystem_device;
  f.revision = m.revision;
  f.driver = m.driver;
  f.bar0_size = m.bar0_size;
  f.link_speed = m.link_speed;
  f.link_width = m.link_width;
  // and where it is.
  f.bdf = bdf;
  f.parent = parent;
  f.irq = irq;
  f.numa_node = numa;
  f.iommu_group = group;
  return f;
}

// A PCI-to-PCI bridge (root or switch port) forwarding buses
// secondary..subordinate.
PciFunctionSpec Bridge(const Model& m, const std::string& bdf, const std::string& parent,
                       int secondary, int subordinate, int numa, int irq, int group) {
  PciFunctionSpec f = Function(m, bdf, parent, numa, irq, group);
  f.secondary_bus = secondary;
  f.subordinate_bus = subordinate;
  return f;
}

PciFunctionSpec HostBridge(const std::string& bdf, int numa) {
  return Function(kHostBridge, bdf, "", numa, 0, 0);
}

PciFunctionSpec RootPort(const std::string& bdf, uint16_t device, int secondary, int numa, int irq,
                         int group) {
  Model m = kRootPort;
  m.device = device;  // 0x2030: Sky Lake-E PCIe Root Port A; 0xa190: C620 PCH root port
  return Bridge(m, bdf, "", secondary, secondary, numa, irq, group);
}

PciFunctionSpec I210(const std::string& bdf, const std::string& parent, int group) {
  PciFunctionSpec f = Function(kI210, bdf, parent, 0, 16, group);
  f.bar0 = 0xc5e00000;
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
  Model m = kCx5;
  m.class_code = class_code;
  PciFunctionSpec f = Function(m, bdf, parent, numa, irq, group);
  f.bar0 = bar0;
  f.sriov = SriovSpec{};  // stride 1, 1 MiB VF BARs
  f.sriov->total_vfs = total_vfs;
  f.sriov->offset = offset;
  f.sriov->vf_device = 0x1018;
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

// ------------------------------------------------ GPU/NIC switch boards

// One PCIe switch of a GPU board: root port <rp>:01.0 on host bridge
// pci0000:<rp> -> Broadcom PEX890xx upstream port <rp+1>:00.0 -> downstream
// ports <rp+2>:0<k>.0, each with one device on bus <dsp secondary>.
struct SwitchSlot {
  enum Kind { kGpu, kCx7, kCx6Dx } kind;
  int bus;  // the device's bus
};

PciFunctionSpec PexPort(const std::string& bdf, const std::string& parent, int secondary,
                        int subordinate, int numa, int group) {
  return Bridge(kPex890xx, bdf, parent, secondary, subordinate, numa, 0, group);
}

// The i-th H100 of a host (its BAR0 after the previous ones').
PciFunctionSpec H100(const std::string& bdf, const std::string& parent, int numa, int group,
                     int i) {
  PciFunctionSpec gpu = Function(kH100, bdf, parent, numa, 18, group);
  gpu.bar0 = 0x96000000ULL + (uint64_t{1} << 25) * static_cast<uint64_t>(i);
  return gpu;
}

// Adds one switch with its devices; returns the next free IOMMU group.
// ConnectX-7 (15b3:1021, single port, SR-IOV 16 VFs of 15b3:101e) and
// ConnectX-6 Dx (15b3:101d, dual port, 8 VFs each) in RoCE mode.
int AddGpuSwitch(HostSpec& h, int rp_bus, int numa, const std::vector<SwitchSlot>& slots, int group,
                 int* gpu_count, int* rdma_count) {
  auto bdf = [](int bus, int dev, int fn) {
    return "0000:" + Hex2(bus) + ":" + Hex2(dev) + "." + std::to_string(fn);
  };
  int last_bus = rp_bus + 2;
  for (const auto& s : slots) last_bus = std::max(last_bus, s.bus);
  PciFunctionSpec rp = RootPort(bdf(rp_bus, 1, 0), 0x352a, rp_bus + 1, numa, 0, group++);
  rp.subordinate_bus = last_bus;
  rp.link_speed = "32.0 GT/s PCIe";
  h.pci.push_back(rp);
  PciFunctionSpec up = PexPort(bdf(rp_bus + 1, 0, 0), rp.bdf, rp_bus + 2, last_bus, numa, group++);
  h.pci.push_back(up);
  const std::string cpus = h.numa_cpulists[static_cast<size_t>(numa)];
  for (size_t k = 0; k < slots.size(); ++k) {
    const SwitchSlot& s = slots[k];
    PciFunctionSpec down =
        PexPort(bdf(rp_bus + 2, static_cast<int>(k) + 1, 0), up.bdf, s.bus, s.bus, numa, group++);
    h.pci.push_back(down);
    if (s.kind == SwitchSlot::kGpu) {
      PciFunctionSpec g = H100(bdf(s.bus, 0, 0), down.bdf, numa, group++, (*gpu_count)++);
      g.local_cpulist = cpus;
      h.pci.push_back(g);
      continue;
    }
    const bool cx7 = s.kind == SwitchSlot::kCx7;
    for (int port = 0; port < (cx7 ? 1 : 2); ++port) {
      const std::string pf = bdf(s.bus, 0, port);
      PciFunctionSpec f =
          Cx5(pf, down.bdf, 0x020000, 40 + *rdma_count,
              0x21800000000ULL + (uint64_t{1} << 32) * static_cast<uint64_t>(*rdma_count),
              cx7 ? 16 : 8, cx7 ? 1 : 2 + 8 * port, group++, numa);
      f.device = cx7 ? 0x1021 : 0x101d;
      f.subsystem_device = cx7 ? 0x0041 : 0x0016;
      f.sriov->vf_device = 0x101e;
      f.link_speed = cx7 ? "32.0 GT/s PCIe" : "16.0 GT/s PCIe";
      f.local_cpulist = cpus;
      h.pci.push_back(f);
      char mac[32];
      snprintf(mac, sizeof mac, "94:6d:ae:%02x:%02x:%02x", s.bus, port, *rdma_count);
      const std::string ifname =
          "enp" + std::to_string(s.bus) + "s0" +
          (cx7 ? std::string("np0") : "f" + std::to_string(port) + "np" + std::to_string(port));
      NetdevSpec n = Netdev(ifname, pf, mac, 2 + *rdma_count, cx7 ? 400000 : 100000);
      n.phys_port_name = "p" + std::to_string(port);
      n.mtu = 9000;
      h.netdevs.push_back(n);
      char ip[32];
      snprintf(ip, sizeof ip, "172.16.%d.%d", 11 + *rdma_count, 10 + port);
      RdmaDeviceSpec r = RoceDevice("mlx5_" + std::to_string(*rdma_count), pf, mac,
                                    GuidFromMac(mac), ifname, ip, *rdma_count);
      r.hca_type = cx7 ? "MT4129" : "MT4125";
      r.fw_ver = cx7 ? "28.39.1002" : "22.39.1002";
      r.board_id = cx7 ? "MT_0000000838" : "MT_0000000359";
      for (auto& p : r.ports) p.rate = cx7 ? "400 Gb/sec (4X NDR)" : "100 Gb/sec (2X HDR)";
      h.rdma.push_back(r);
      ++*rdma_count;
    }
  }
  return group;
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
  PciFunctionSpec gpu = H100("0000:18:00.0", "0000:17:00.0", 0, 4, 0);
  gpu.bar0 = 0xa8000000;
  gpu.link_speed = "16.0 GT/s PCIe";
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
  // devlink as `snapshot` captures it (modules/eswitch): both PFs' E-Switch
  // in legacy mode, mlx5's default flow steering (dmfs).
  for (const char* bdf : {"0000:af:00.0", "0000:af:00.1"}) {
    h.files.push_back({std::string("/run/provisioner/devlink/") + bdf,
                       "{\"flowSteeringMode\":\"dmfs\",\"mode\":\"legacy\"}\n"});
  }
  return h;
}

HostSpec Cx5RoceQosHost() {
  HostSpec h = Cx5RoceHost();
  for (NetdevSpec& n : h.netdevs) {
    if (n.name == "ens6f0np0") n.ecn_enabled = 0x00;  // DCQCN turned off
    if (n.name == "ens6f1np1") n.ecn_enabled = 0xff;  // the driver's default
  }
  // DCBX in the firmware's hands (mlx5's default: no DCB_CAP_DCBX_HOST).
  // Port buffers as a ConnectX-5 reports them (DCB_ATTR_DCB_BUFFER: port
  // buffer 262016 bytes, buffers 0 and 1 of 130944, every priority in
  // buffer 0; NVIDIA's "HowTo Tune Receive Buffers" shows the same figures)
  // and mlx5's default cable length, 7 m (ieee_pfc.delay).
  for (const char* n : {"ens6f0np0", "ens6f1np1"}) {
    h.files.push_back(
        {std::string("/run/provisioner/dcb/") + n,
         "{\"buffer\":{\"prio2buffer\":[0,0,0,0,0,0,0,0],\"sizes\":[130944,130944,0,0,0,0,0,0],"
         "\"total\":262016},\"cableLength\":7,\"dcbx\":\"firmware\",\"pfc\":[],\"trust\":"
         "\"pcp\"}\n"});
  }
  // Global pause on (mlx5's default) on port 0, already off on port 1.
  h.files.push_back({"/run/provisioner/pause/ens6f0np0", "{\"rx\":true,\"tx\":true}\n"});
  h.files.push_back({"/run/provisioner/pause/ens6f1np1", "{\"rx\":false,\"tx\":false}\n"});
  // NVIDIA's out-of-tree mlx5_ib "force TC": unset on mlx5_0, 106 on mlx5_1.
  h.files.push_back(
      {"/sys/devices/pci0000:ae/0000:ae:00.0/0000:af:00.0/infiniband/mlx5_0/tc/1/traffic_class",
       ""});
  h.files.push_back(
      {"/sys/devices/pci0000:ae/0000:ae:00.0/0000:af:00.1/infiniband/mlx5_1/tc/1/traffic_class",
       "Global tclass=106\n"});
  return h;
}

// mstflint 4.36's `mstfwreset -d <BDF> query` of a ConnectX-5 (small_utils/
// mlxfwresetlib: CmdRegMfrl.query_text, CmdRegMcam.reset_sync_query_text:
// "{level}: {description:<62}-{Supported|Not Supported:<14}{(default)}").
static constexpr char kCx5IbMstfwresetQuery[] = R"(Reset-levels:
0: Driver, PCI link, network link will remain up ("live-Patch")  -Supported     
1: Only ARM side will not remain up ("Immediate reset").         -Not Supported 
3: Driver restart and PCI reset                                  -Supported     (default)
4: Warm Reboot                                                   -Supported     

Reset-types (relevant only for reset-levels 1,3,4):
0: Full chip reset                                               -Supported     (default)
1: Phy-less reset (keep network port active during reset)        -Not Supported 
2: NIC only reset (for SoC devices)                              -Not Supported 
3: ARM only reset                                                -Not Supported 
4: ARM OS shut down                                              -Not Supported 

Reset-sync (relevant only for reset-level 3):
0: Tool is the owner                                             -Supported     (default)
1: Driver is the owner                                           -Supported     

)";

// mstflint 4.36's `mstflint -d <BDF> query` of the ConnectX-5 (flint
// subcommands.cpp QueryCommand) running firmware `fw` released on `date`
// with its UEFI and PXE ROMs; with `device` false, `mstflint -i <image>
// query` of an image for it (printImageInfo: no GUIDs, MACs nor device VSD).
std::string Cx5MstflintQuery(const std::string& fw, const std::string& date,
                             const std::string& uefi, const std::string& pxe, bool device) {
  std::string out = "Image type:            FS4\nFW Version:            " + fw +
                    "\nFW Release Date:       " + date + "\nProduct Version:       " + fw +
                    "\nRom Info:              type=UEFI version=" + uefi +
                    " cpu=AMD64,AARCH64\n                       type=PXE version=" + pxe +
                    " cpu=AMD64\n";
  if (device) {
    out +=
        "Description:           UID                GuidsNumber\n"
        "Base GUID:             ec0d9a03008abcde        8\n"
        "Base MAC:              ec0d9a8abcde            8\n";
  }
  out += "Image VSD:             N/A\n";
  if (device) out += "Device VSD:            N/A\n";
  return out + "PSID:                  MT_0000000008\nSecurity Attributes:   N/A\n";
}

static constexpr char kCx5IbMstconfigQuery[] = R"(
Device #1:
----------

Device type:    ConnectX5       
Name:           MCX556A-ECA_Ax  
Description:    ConnectX-5 VPI adapter card; EDR IB (100Gb/s) and 100GbE; dual-port QSFP28; PCIe3.0 x16; tall bracket; ROHS R6
Device:         0000:86:00.0    

Configurations:                              Default         Current         Next Boot
         MEMIC_BAR_SIZE                      0               0               0               
*        NUM_OF_VFS                          8               16              16              
         NUM_OF_PF                           2               2               2               
         FPP_EN                              True(1)         True(1)         True(1)         
         SRIOV_EN                            True(1)         True(1)         True(1)         
         PF_LOG_BAR_SIZE                     5               5               5               
         VF_LOG_BAR_SIZE                     1               1               1               
         ATS_ENABLED                         False(0)        False(0)        False(0)        
         PCI_ATOMIC_MODE                     PCI_ATOMIC_DISABLED_EXT_ATOMIC_ENABLED(0) PCI_ATOMIC_DISABLED_EXT_ATOMIC_ENABLED(0) PCI_ATOMIC_DISABLED_EXT_ATOMIC_ENABLED(0)
         LINK_TYPE_P1                        IB(1)           IB(1)           IB(1)           
         KEEP_ETH_LINK_UP_P1                 True(1)         True(1)         True(1)         
         KEEP_IB_LINK_UP_P1                  False(0)        False(0)        False(0)        
         SRIOV_IB_ROUTING_MODE_P1            LID(1)          LID(1)          LID(1)          
         LINK_TYPE_P2                        IB(1)           IB(1)           IB(1)           
The '*' shows parameters with next value different from default/current value.
)";

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
  r.board_id = "MT_0000000008";  // the PSID of its mstflint capture
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
  // `mstconfig -e -d 0000:86:00.0 query` as the firmware module reads it under
  // a tree root (mstflint 4.21 layout, mlxcfg_ui.cpp; excerpt of the
  // parameters): port 1 InfiniBand, SR-IOV on with 16 VFs.
  h.files.push_back({"/run/provisioner/mstconfig/0000:86:00.0.query", kCx5IbMstconfigQuery});
  // `mstfwreset -d 0000:86:00.0 query` (spec.firmware.activation: reset):
  // level 3 supported (modules/firmware/testdata/mstfwreset-cx5.query).
  h.files.push_back({"/run/provisioner/mstfwreset/0000:86:00.0.query", kCx5IbMstfwresetQuery});
  // `mstflint -d 0000:86:00.0 query` (nics[].firmwareVersion): 16.35.2000,
  // PSID MT_0000000008 (modules/firmware/testdata/mstflint-cx5.query), and
  // the stand-in of a 16.35.3006 image for that PSID: the text `mstflint -i
  // <image> query` prints for it (testdata/mstflint-image-cx5.query).
  h.files.push_back({"/run/provisioner/mstflint/0000:86:00.0.query",
                     Cx5MstflintQuery("16.35.2000", "20.12.2022", "14.28.15", "3.6.804", true)});
  h.files.push_back({"/opt/fw/fw-ConnectX5-rel-16_35_3006-MCX556A-ECA_Ax.bin",
                     Cx5MstflintQuery("16.35.3006", "20.2.2023", "14.29.15", "3.7.102", false)});
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

HostSpec BenchHost(int pfs, int gpus) {
  pfs = std::clamp(pfs, 1, 16);
  gpus = std::clamp(gpus, 0, pfs);
  HostSpec h;
  h.hostname = "bench";
  h.modules = RdmaModules(/*ipoib=*/false);
  h.modules.push_back(Mod("nvidia", 56856576));
  h.pci.push_back(HostBridge("0000:00:00.0", 0));
  int group = 1;
  for (int i = 0; i < pfs; ++i) {
    const int b = 0x10 + 6 * i;
    const int numa = i * 2 / pfs;  // first half on node 0, second on node 1
    auto bdf = [](int bus, int dev) { return "0000:" + Hex2(bus) + ":" + Hex2(dev) + ".0"; };
    PciFunctionSpec rp = RootPort(bdf(b, 0), 0x2030, b + 1, numa, 24 + i % 8, group++);
    rp.subordinate_bus = b + 4;
    h.pci.push_back(rp);
    // Broadcom/PLX PEX 89xxx switch: one upstream, two downstream ports.
    Model pex = kRootPort;
    pex.vendor = 0x1000;
    pex.device = 0xc030;
    pex.subsystem_vendor = 0x1000;
    pex.subsystem_device = 0xa064;
    PciFunctionSpec up = Bridge(pex, bdf(b + 1, 0), rp.bdf, b + 2, b + 4, numa, 0, group++);
    h.pci.push_back(up);
    for (int port = 0; port < 2; ++port) {
      h.pci.push_back(
          Bridge(pex, bdf(b + 2, port), up.bdf, b + 3 + port, b + 3 + port, numa, 0, group++));
    }
    const std::string pf = bdf(b + 3, 0);
    h.pci.push_back(Cx5(pf, bdf(b + 2, 0), 0x020000, 32 + i % 64,
                        0x380000000000ULL + (uint64_t{1} << 32) * i, 127, 1, group++, numa));
    if (i < gpus) {
      PciFunctionSpec gpu = H100(bdf(b + 4, 0), bdf(b + 2, 1), numa, group++, 0);
      gpu.bar0 = 0xa8000000ULL + (uint64_t{1} << 24) * i;
      h.pci.push_back(gpu);
    }
    char mac[32];
    snprintf(mac, sizeof mac, "0c:42:a1:%02x:%02x:00", 0x40 + i / 256, i & 0xff);
    std::string ifname = "enp" + std::to_string(b + 3) + "s0np0";
    NetdevSpec n = Netdev(ifname, pf, mac, 2 + i, 200000);
    n.phys_port_name = "p0";
    n.mtu = 9000;
    h.netdevs.push_back(n);
    char ip[32];
    snprintf(ip, sizeof ip, "172.%d.0.1", 16 + i);
    RdmaDeviceSpec r =
        RoceDevice("mlx5_" + std::to_string(i), pf, mac, GuidFromMac(mac), ifname, ip, i);
    for (auto& port : r.ports) port.gid_table_size = 256;
    h.rdma.push_back(r);
  }
  return h;
}

HostSpec HgxH100Host() {
  HostSpec h;
  h.hostname = "hgx-h100";
  h.numa_cpulists = {"0-55,112-167", "56-111,168-223"};
  h.modules = RdmaModules(/*ipoib=*/false);
  h.modules.push_back(Mod("nvidia", 56856576));
  // (root port bus, GPU bus, ConnectX-7 bus, ConnectX-6 Dx bus or 0), as in
  // leptonai/gpud pkg/pci/testdata/lspci-vvv (an HGX H100 8-GPU server).
  const int layout[8][4] = {{0x15, 0x19, 0x1a, 0x1b}, {0x37, 0x3b, 0x3c, 0},
                            {0x48, 0x4c, 0x4d, 0},    {0x59, 0x5d, 0x5e, 0},
                            {0x97, 0x9b, 0x9c, 0x9d}, {0xb7, 0xbb, 0xbc, 0},
                            {0xc7, 0xcb, 0xcc, 0},    {0xd7, 0xdb, 0xdc, 0}};
  int group = 1, gpus = 0, rdma = 0;
  for (int i = 0; i < 8; ++i) {
    std::vector<SwitchSlot> slots = {{SwitchSlot::kGpu, layout[i][1]},
                                     {SwitchSlot::kCx7, layout[i][2]}};
    if (layout[i][3] != 0) slots.push_back({SwitchSlot::kCx6Dx, layout[i][3]});
    group = AddGpuSwitch(h, layout[i][0], i / 4, slots, group, &gpus, &rdma);
  }
  return h;
}

HostSpec GpuSharedSwitchHost() {
  HostSpec h;
  h.hostname = "gpu-shared-switch";
  h.modules = RdmaModules(/*ipoib=*/false);
  h.modules.push_back(Mod("nvidia", 56856576));
  int group = 1, gpus = 0, rdma = 0;
  group = AddGpuSwitch(
      h, 0x15, 0, {{SwitchSlot::kGpu, 0x19}, {SwitchSlot::kCx7, 0x1a}, {SwitchSlot::kGpu, 0x1b}},
      group, &gpus, &rdma);
  AddGpuSwitch(h, 0x97, 1,
               {{SwitchSlot::kGpu, 0x9b}, {SwitchSlot::kCx7, 0x9c}, {SwitchSlot::kGpu, 0x9d}},
               group, &gpus, &rdma);
  return h;
}

namespace {

// `mstconfig -e -d <bdf> query` of a ConnectX-7 VPI card (MCX75310AAS-NEAT)
// whose port runs Ethernet, as mstflint 4.26 to 4.34 print it (mlxcfg_ui.cpp
// printSingleParam "%s%s     %-44s", values "%-20s" and a space after each,
// as modules/firmware/testdata/cx7-eth-ro.query): the '*' column, then "RO"
// for a parameter the firmware does not let be set (NUM_OF_PF here), and the
// footnote about it. SR-IOV on with 16 VFs, ATS off (the factory default),
// the RoCE congestion parameters nic-configuration-operator's roceOptimized
// sets, at defaults.
std::string Cx7EthMstconfigQuery(const std::string& bdf) {
  struct Row {
    const char* name;
    const char* def;
    const char* current;  // the next-boot value too
    bool read_only = false;
  };
  static constexpr Row kRows[] = {
      {"MEMIC_BAR_SIZE", "0", "0"},
      {"NUM_OF_VFS", "8", "16"},
      {"NUM_OF_PF", "1", "1", true},
      {"FPP_EN", "True(1)", "True(1)"},
      {"SRIOV_EN", "True(1)", "True(1)"},
      {"PF_LOG_BAR_SIZE", "5", "5"},
      {"VF_LOG_BAR_SIZE", "1", "1"},
      {"NUM_PF_MSIX", "63", "63"},
      {"NUM_VF_MSIX", "11", "11"},
      {"INT_LOG_MAX_PAYLOAD_SIZE", "AUTOMATIC(0)", "AUTOMATIC(0)"},
      {"PCI_ATOMIC_MODE", "PCI_ATOMIC_DISABLED_EXT_ATOMIC_ENABLED(0)",
       "PCI_ATOMIC_DISABLED_EXT_ATOMIC_ENABLED(0)"},
      {"ATS_ENABLED", "False(0)", "False(0)"},
      {"ADVANCED_PCI_SETTINGS", "False(0)", "False(0)"},
      {"UCTX_EN", "True(1)", "True(1)"},
      {"LINK_TYPE_P1", "IB(1)", "ETH(2)"},
      {"KEEP_ETH_LINK_UP_P1", "True(1)", "True(1)"},
      {"NUM_OF_TC_P1", "_8_TCs(0)", "_8_TCs(0)"},
      {"NUM_OF_PFC_P1", "8", "8"},
      {"ROCE_CC_PRIO_MASK_P1", "255", "255"},
      {"CNP_DSCP_P1", "48", "48"},
      {"CNP_802P_PRIO_P1", "6", "6"},
      {"SAFE_MODE_THRESHOLD", "10", "10"},
      {"SAFE_MODE_ENABLE", "True(1)", "True(1)"},
  };
  // printSingleParam: a '*' when next boot differs from default, "RO" or
  // two spaces, 5 spaces, the name in 44 columns, each value in 20 and a
  // space after it (PRINT_SPACE_IF_NEEDED: the width printed is >= 20).
  auto value = [](const std::string& v) {
    return v.size() < 20 ? v + std::string(20 - v.size(), ' ') : v;
  };
  std::string out =
      "\nDevice #1:\n----------\n\n"
      "Device type:        ConnectX7           \n"
      "Name:               MCX75310AAS-NEA_Ax  \n"
      "Description:        NVIDIA ConnectX-7 HHHL adapter card; 400Gb/s NDR IB; single-port OSFP; "
      "PCIe 5.0 x16; tall bracket\n"
      "Device:             " +
      bdf +
      "        \n\n"
      // "%-20s%39s%21s%23s"
      "Configurations:                                     Default              Current"
      "              Next Boot\n";
  for (const Row& r : kRows) {
    const std::string name = r.name;
    out += std::string(std::string(r.def) != r.current ? "*" : " ") + (r.read_only ? "RO" : "  ") +
           std::string(5, ' ') + name + std::string(name.size() < 44 ? 44 - name.size() : 1, ' ') +
           value(r.def) + " " + value(r.current) + " " + value(r.current) + "\n";
  }
  out += "The '*' shows parameters with next value different from default/current value.\n";
  out += "\nThe 'RO' shows parameters which are for read only and cannot be changed\n";
  return out;
}

}  // namespace

HostSpec HgxH100PcieHost() {
  HostSpec h = HgxH100Host();
  h.hostname = "hgx-h100-pcie";
  h.cmdline = "BOOT_IMAGE=/boot/vmlinuz-" + h.kernel_release +
              " root=UUID=6f1c0a43-2b7e-4d3c-9f5e-1a2b3c4d5e6f ro quiet intel_iommu=on";
  std::map<std::string, int> port_type;
  for (PciFunctionSpec& f : h.pci) {
    PcieConfigSpec c;
    if ((f.class_code >> 8) == 0x0604) {
      auto parent = port_type.find(f.parent);
      if (f.parent.empty()) {
        c.port_type = 4;  // root port
      } else if (parent != port_type.end() && parent->second == 4) {
        c.port_type = 5;  // switch upstream port
      } else {
        c.port_type = 6;  // switch downstream port
      }
      if (c.port_type != 5) {
        c.acs_capability = 0x005f;
        c.acs_control = 0x001d;
      }
    }
    port_type[f.bdf] = c.port_type;
    f.config = c;
    // The ConnectX-7 rail cards' firmware configuration, as `snapshot`
    // captures it (docs/snapshot.md).
    if (f.vendor == 0x15b3 && f.device == 0x1021) {
      h.files.push_back(
          {"/run/provisioner/mstconfig/" + f.bdf + ".query", Cx7EthMstconfigQuery(f.bdf)});
    }
  }
  // A Debian 12 boot configuration (spec.kernel.cmdline plans a GRUB
  // drop-in): /etc/os-release as Debian 12 ships it, /etc/default/grub as
  // the grub2-common package installs it, with the running intel_iommu=on.
  h.files.push_back({"/etc/os-release",
                     "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\n"
                     "VERSION_ID=\"12\"\nVERSION=\"12 (bookworm)\"\nVERSION_CODENAME=bookworm\n"
                     "ID=debian\nHOME_URL=\"https://www.debian.org/\"\n"
                     "SUPPORT_URL=\"https://www.debian.org/support\"\n"
                     "BUG_REPORT_URL=\"https://bugs.debian.org/\"\n"});
  h.files.push_back({"/etc/default/grub",
                     "# If you change this file, run 'update-grub' afterwards to update\n"
                     "# /boot/grub/grub.cfg.\n"
                     "# For full documentation of the options in this file, see:\n"
                     "#   info -f grub -n 'Simple configuration'\n\n"
                     "GRUB_DEFAULT=0\nGRUB_TIMEOUT=5\n"
                     "GRUB_DISTRIBUTOR=`lsb_release -i -s 2> /dev/null || echo Debian`\n"
                     "GRUB_CMDLINE_LINUX_DEFAULT=\"quiet\"\n"
                     "GRUB_CMDLINE_LINUX=\"intel_iommu=on\"\n"});
  return h;
}

std::vector<std::string> PresetNames() {
  return {"cx5-roce",      "cx5-roce-qos",      "cx5-ib",     "hgx-h100",
          "hgx-h100-pcie", "gpu-shared-switch", "scaled-<P>", "bench-<P>"};
}

bool PresetByName(const std::string& name, HostSpec* out) {
  static constexpr std::pair<const char*, HostSpec (*)()> kFixed[] = {
      {"cx5-roce", Cx5RoceHost},
      {"cx5-roce-qos", Cx5RoceQosHost},
      {"cx5-ib", Cx5IbHost},
      {"hgx-h100", HgxH100Host},
      {"hgx-h100-pcie", HgxH100PcieHost},
      {"gpu-shared-switch", GpuSharedSwitchHost}};
  for (const auto& [preset, make] : kFixed) {
    if (name == preset) {
      *out = make();
      return true;
    }
  }
  // "<prefix><P>": P PFs, 1 to max.
  struct Sized {
    std::string prefix;
    int max;
    HostSpec (*make)(int);
  };
  const Sized kSized[] = {{"bench-", 16, [](int p) { return BenchHost(p, std::min(p, 8)); }},
                          {"scaled-", 118, ScaledRoceHost}};
  for (const Sized& s : kSized) {
    if (name.rfind(s.prefix, 0) != 0) continue;
    const int p = std::atoi(name.c_str() + s.prefix.size());
    if (p < 1 || p > s.max) return false;
    *out = s.make(p);
    return true;
  }
  return false;
}

}  // namespace provisioner::testing
