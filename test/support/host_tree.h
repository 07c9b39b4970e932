// Builds kernel-shaped host trees (sysfs/procfs/etc under a root directory):
// the same file names and the same relative symlinks as a real Linux host, so
// the engine, libpci (sysfs backend) and the kernel simulator read them like
// the live /sys. Used by //test/tools:make_tree (checked-in trees, big
// benchmark trees) and by the SR-IOV simulator (VF functions, netdevs, RDMA
// devices it creates at run time).
#ifndef PROVISIONER_TEST_SUPPORT_HOST_TREE_H_
#define PROVISIONER_TEST_SUPPORT_HOST_TREE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"

namespace provisioner::testing {

// ---------------------------------------------------------------- PCI address

struct PciBdf {
  int domain = 0;
  int bus = 0;
  int dev = 0;
  int fn = 0;

  // PCIe routing id: bus << 8 | dev << 3 | fn.
  int RoutingId() const { return bus << 8 | dev << 3 | fn; }
  // The function at `rid` in the same domain; nullopt when rid > 0xffff.
  static std::optional<PciBdf> FromRoutingId(int domain, int rid);
  // "0000:af:00.0"
  std::string ToString() const;
};

// Parses "0000:af:00.0" (domain mandatory, lowercase or uppercase hex), as
// PciAddress::ParseFull.
std::optional<PciBdf> ParseBdf(std::string_view s);

// The BDF of VF `vf_index` (0-based) of the PF, as pci_iov_virtfn_bus/devfn
// compute it: routing id = PF routing id + offset + index * stride.
std::optional<PciBdf> VfBdf(const PciBdf& pf, int offset, int stride, int vf_index);

// ------------------------------------------------------------------ writer

// Writes entries under `root`. All paths are host paths ("/sys/...").
class TreeWriter {
 public:
  explicit TreeWriter(std::string root);
  const std::string& root() const { return root_; }
  // Filesystem path of a host path (not resolved).
  std::string Fs(std::string_view host_path) const;

  Status MakeDir(std::string_view path, int mode = 0755);  // mkdir -p
  // Creates or replaces a regular file (and missing parent directories).
  Status WriteFile(std::string_view path, std::string_view content, int mode = 0444);
  // A symlink at `link` to the host path `target`, written as the relative
  // text sysfs uses (SysfsRelativeLink). Replaces an existing link.
  Status Link(std::string_view link, std::string_view target);
  // rm -rf without following symlinks; a missing path is fine.
  Status RemoveAll(std::string_view path);
  bool Exists(std::string_view path) const;  // lstat: links count, even dangling

  // Reads through links (which must stay inside the root).
  StatusOr<std::string> ReadFile(std::string_view path) const;
  // ReadFile minus trailing whitespace.
  StatusOr<std::string> ReadAttr(std::string_view path) const;
  // Sorted entry names; missing directory = empty list.
  std::vector<std::string> List(std::string_view path) const;
  // The canonical host path (links resolved inside the root).
  StatusOr<std::string> RealPath(std::string_view path) const;
  // Raw link text; "" when not a link.
  std::string ReadLink(std::string_view path) const;

 private:
  std::string root_;
  std::shared_ptr<HostFs> reader_;  // reads with in-root link resolution
};

// The link text sysfs writes for a link at `link` pointing at `target`: up to
// the nearest common ancestor that is a strict ancestor of the target, then
// down ("/sys/bus/pci/devices/X" -> "../../../devices/pci0000:ae/.../X";
// ".../X/net/eth0/device" -> "../../../X").
std::string SysfsRelativeLink(std::string_view link, std::string_view target);

// --------------------------------------------------------------------- specs

struct SriovSpec {
  int total_vfs = 0;
  int num_vfs = 0;  // VFs are created by the simulator, not here; must be 0
  int offset = 1;
  int stride = 1;
  uint16_t vf_device = 0;
  bool drivers_autoprobe = true;
  uint64_t vf_bar_size = 0x100000;  // per-VF BAR0 size (IOV resource line)
};

// What a function's PCIe config space holds beyond its IDs and class.
struct PcieConfigSpec {
  // PCI Express Capabilities Device/Port Type: 0 endpoint, 4 root port,
  // 5 switch upstream port, 6 switch downstream port.
  int port_type = 0;
  int max_read_request = 512;  // Device Control bits 14:12 (bytes)
  // ACS extended capability (ID 0x000D): nullopt = none.
  std::optional<uint16_t> acs_capability;
  uint16_t acs_control = 0;
};

struct PciFunctionSpec;
// The 4096 bytes of a PCIe function's config space, as the kernel's sysfs
// `config` gives them to root (PCI Local Bus 3.0 §6.1; PCIe Base 5.0 §7.5):
// type 0/1 header, Power Management (0x40) -> PCI Express (0x60) capability,
// extended capabilities AER (0x100) -> ACS (0x148) when it has one.
std::string PcieConfigBytes(const PciFunctionSpec& f);

struct PciFunctionSpec {
  std::string bdf;     // "0000:af:00.0"
  std::string parent;  // upstream bridge BDF; "" = on the host bridge pci<dom>:<bus>
  uint16_t vendor = 0;
  uint16_t device = 0;
  uint32_t class_code = 0;  // 0x020000
  uint16_t subsystem_vendor = 0;
  uint16_t subsystem_device = 0;
  uint8_t revision = 0;
  int irq = 0;
  int numa_node = -1;
  std::string local_cpulist;  // "24-47,72-95"; "" = all CPUs of the host
  std::string driver;         // "" = unbound
  uint64_t bar0 = 0;          // BAR0 base (64-bit prefetchable memory); 0 = none
  uint64_t bar0_size = 0;
  std::optional<SriovSpec> sriov;
  std::string link_speed = "8.0 GT/s PCIe";
  int link_width = 16;
  int iommu_group = -1;  // -1 = no iommu_group link
  // Bridges (class 0x0604xx) also get secondary/subordinate bus numbers.
  int secondary_bus = -1;
  int subordinate_bus = -1;
  // A 4096-byte `config` file (PCIe config space, see PcieConfigBytes); none
  // when unset (libpci then reads the IDs from the other files).
  std::optional<PcieConfigSpec> config;
};

struct GidSpec {
  int index = 0;
  std::string gid;   // "fe80:0000:0000:0000:0e42:a1ff:fe5b:7c2e"
  std::string type;  // "IB/RoCE v1" | "RoCE v2"
  std::string ndev;  // netdev name; "" = no ndevs file (IB)
};

struct RdmaPortSpec {
  int port = 1;
  std::string link_layer = "Ethernet";  // Ethernet | InfiniBand
  std::string state = "4: ACTIVE";
  std::string phys_state = "5: LinkUp";
  std::string rate = "100 Gb/sec (4X EDR)";
  std::string lid = "0x0";
  std::string sm_lid = "0x0";
  std::string cap_mask = "0x00010000";
  // gids/0..gid_table_size-1 exist (zeros when unused); gid_attrs/{types,ndevs}
  // files exist only for used slots (the kernel answers EINVAL for the others).
  int gid_table_size = 16;
  int pkey_table_size = 1;  // pkeys/0 = 0xffff, others 0x0000
  std::vector<GidSpec> gids;
};

struct RdmaDeviceSpec {
  std::string name;  // mlx5_0
  std::string pci;   // BDF of the PCI function it sits on
  std::string node_guid;
  std::string sys_image_guid;
  std::string fw_ver = "16.35.2000";
  std::string hca_type = "MT4119";
  std::string board_id = "MT_0000000008";
  std::string node_desc;  // "" = "<hostname> <name>"
  int uverbs = -1;        // -1 = next free uverbsN
  std::vector<RdmaPortSpec> ports;
};

struct NetdevSpec {
  std::string name;
  std::string pci;  // BDF of its PCI function; "" = virtual (lo)
  std::string mac;  // 6 or 20 bytes, "aa:bb:..."
  int mtu = 1500;
  int type = 1;     // ARPHRD_ETHER = 1, ARPHRD_INFINIBAND = 32, loopback 772
  int ifindex = 0;  // 0 = next free
  std::string operstate = "up";
  int speed = -1;  // Mb/s; -1 = unknown
  int dev_port = 0;
  std::string phys_port_name;  // mlx5 PF "p0"; "" = no file
  // mlx5 RoCE ECN: ecn/roce_np/enable/<p> and ecn/roce_rp/enable/<p> for
  // p = 0..7, "1" where bit p is set; nullopt = no ecn/ directory.
  std::optional<uint8_t> ecn_enabled;
};

struct ModuleSpec {
  std::string name;
  int size = 65536;
  std::vector<std::string> used_by;                             // modules depending on this one
  std::vector<std::pair<std::string, std::string>> parameters;  // name -> value
};

struct HostSpec {
  std::string hostname = "worker1";
  std::string kernel_release = "6.1.0-18-amd64";
  std::string cmdline;  // "" = a Debian default
  // NUMA: node n holds CPUs cpulists[n] ("0-23,48-71").
  std::vector<std::string> numa_cpulists = {"0-23,48-71", "24-47,72-95"};
  std::vector<ModuleSpec> modules;
  std::vector<PciFunctionSpec> pci;  // bridges before what sits behind them
  std::vector<NetdevSpec> netdevs;
  std::vector<RdmaDeviceSpec> rdma;
  // Further files (host path, content), written last: e.g. a captured
  // `mstconfig query` under /run/provisioner/mstconfig/.
  std::vector<std::pair<std::string, std::string>> files;
};

// Writes the whole host under `root` (created if missing): /sys, /proc,
// /etc/modprobe.d, /etc/modules-load.d, /run, /lib/modules/<release>.
Status BuildHostTree(const HostSpec& spec, const std::string& root);

// ------------------------------------------------------- per-object writers
// Also used by the simulator on existing trees. `dev_dir` is the host path of
// the PCI function's real directory (/sys/devices/pci0000:ae/.../0000:af:00.0).

Status AddPciFunction(TreeWriter& w, const PciFunctionSpec& f, const std::string& dev_dir);
Status AddNetdev(TreeWriter& w, const NetdevSpec& n, const std::string& dev_dir);
Status AddRdmaDevice(TreeWriter& w, const RdmaDeviceSpec& r, const std::string& dev_dir);

// Next free names/numbers in an existing tree.
int NextFreeIfindex(const TreeWriter& w);
int NextFreeUverbs(const TreeWriter& w);
int NextFreeIommuGroup(const TreeWriter& w);
// Smallest n such that <prefix><n> is not in /sys/class/infiniband.
std::string NextFreeRdmaName(const TreeWriter& w, const std::string& prefix);

// ----------------------------------------------------------------- helpers

// "0c:42:a1:5b:7c:2e" -> "0c42:a103:005b:7c2e" (Mellanox: OUI + 0300 + NIC id).
std::string GuidFromMac(const std::string& mac);
// EUI-64 link-local GID: "fe80:0000:0000:0000:0e42:a1ff:fe5b:7c2e".
std::string LinkLocalGidFromMac(const std::string& mac);
// IPv4-mapped GID: "0000:0000:0000:0000:0000:ffff:ac51:0077" for 172.81.0.119.
std::string Ipv4MappedGid(const std::string& ipv4);
// A GID with prefix fe80::/64 and the given GUID ("ec0d:9a03:008a:bcde").
std::string IbGidFromGuid(const std::string& guid);
// The hex CPU mask sysfs prints in local_cpus for a cpulist ("0-3" -> "0000000f").
std::string CpuMaskFromList(const std::string& cpulist, int nr_cpus);

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SUPPORT_HOST_TREE_H_
