// The desired state: host.yaml after schema and semantic validation.
// Unspecified means unmanaged: every optional field left empty is a thing the
// planner must not touch. Field comments show the YAML each one reads.
#ifndef PROVISIONER_ENGINE_MODEL_DESIRED_H_
#define PROVISIONER_ENGINE_MODEL_DESIRED_H_

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/model/source_mark.h"

namespace provisioner {

namespace config {
struct YamlDocument;  // engine/config/yaml_document.h
}  // namespace config

// spec.rdma: { netnsMode: exclusive, persist: true }
struct RdmaSpec {
  std::optional<std::string> netns_mode;  // "shared" | "exclusive"
  bool persist = true;
};

// spec.pcie: { disableAcs: gpuNicPaths }
struct PcieSpec {
  // none (default: ACS left as it is) | gpuNicPaths | all
  std::optional<std::string> disable_acs;
};

// spec.kernel: { cmdline: [iommu=pt, intel_iommu=on], cmdlineRemove: [quiet] }:
// kernel command line arguments every boot entry must have, and those it
// must not have (a bare key removes every value of it: "iommu" removes
// "iommu=off"). Module kernel; takes effect at the next boot.
struct KernelSpec {
  std::vector<std::string> cmdline;         // "key" or "key=value", as written
  std::vector<std::string> cmdline_remove;  // cmdlineRemove
};

// spec.firmware: { activation: reset }: how firmware changes take effect.
// reboot (default): for the next boot, apply exits 3. reset: mstfwreset
// level 3 after the sets, then the rest of the plan anew; exit 0.
struct FirmwareActivationSpec {
  std::string activation = "reboot";  // "reboot" | "reset"
};

// spec.agent: what `provisioner agent` applies without a person.
// auto_apply holds disruption classes: "live", "link-flap".
struct AgentSpec {
  std::vector<std::string> auto_apply{"live", "link-flap"};
};

// spec.nics[].firmwareVersion: { version: 28.39.1002, image: /path.bin,
// policy: validate }: the firmware version the card must run.
struct FirmwareVersionSpec {
  std::string version;
  std::optional<std::string> image;
  std::string policy = "validate";  // validate | update (burn the image)
};

// spec.nics[].pcie: { maxReadRequest: 4096 }
struct NicPcieSpec {
  std::optional<int> max_read_request;  // bytes: 128..4096, a power of two
};

// spec.nics[].ipoib: { mode: datagram, mtu: 2044, addresses: [172.16.0.10/16],
//                      pkeys: ["0x8001"] }: the NIC's IPoIB host interface.
struct IpoibSpec {
  std::optional<std::string> mode;  // "datagram" | "connected"
  std::optional<int> mtu;           // of the PF's IPoIB netdev and its pkey children
  // Global addresses of the PF's IPoIB netdev, CIDR as written; unset: unmanaged.
  std::optional<std::vector<std::string>> addresses;
  std::vector<std::string> pkeys;   // "0x8001" as written: one child each
};

// spec.nics[].roce: { trust: dscp, pfc: [3], ecn: [3] } (priorities 0..7).
// pfc is the exact set of PFC-enabled priorities; ecn the priorities whose
// ECN must be on (others left as they are); an absent field is unmanaged.
// cnp: the congestion notification packets the notification point sends:
// their DSCP (0..63) and 802.1p priority (0..7).
struct RoceCnpSpec {
  std::optional<int> dscp;
  std::optional<int> priority;
};
// tos: the RDMA device's default RoCE traffic class (IP ToS byte, 0..255);
// pause: global (802.3x) pause frames rx and tx; dscpMap: DSCP -> priority
// entries that override the default map (priority = DSCP >> 3) trust dscp
// installs; dcbx: who runs DCBX, "host" (not willing: the switch's LLDP
// cannot change PFC) or "firmware".
// buffers: the port receive buffers (dcbnl DCB_ATTR_DCB_BUFFER, what
// `mlnx_qos --prio2buffer/--buffer_size` and `dcb buffer set` send):
// prio2buffer[p] is the buffer (0..7) priority p lands in, sizes[b] the bytes
// of buffer b (the buffers not listed: 0). An absent part is unmanaged.
struct RoceBufferSpec {
  std::optional<std::vector<int>> prio2buffer;
  std::optional<std::vector<long long>> sizes;
};
struct NicRoceSpec {
  std::optional<std::string> trust;     // dscp | pcp
  std::optional<std::vector<int>> pfc;  // PFC-enabled priorities, ascending
  std::optional<std::vector<int>> ecn;  // ECN on (roce_np and roce_rp), ascending
  std::optional<RoceCnpSpec> cnp;
  // (Initialized, so that the brace initializations of the fields above stay
  // complete for -Wmissing-field-initializers.)
  std::optional<int> tos = std::nullopt;
  std::optional<bool> pause = std::nullopt;
  std::optional<std::map<int, int>> dscp_map = std::nullopt;
  std::optional<std::string> dcbx = std::nullopt;  // host | firmware
  // cableLength: meters, ieee_pfc.delay (mlx5 computes the lossless buffers'
  // xoff threshold from it; `dcb pfc set delay`, `mlnx_qos --cable_len`).
  std::optional<int> cable_length = std::nullopt;
  std::optional<RoceBufferSpec> buffers = std::nullopt;
  // dscpMap keys that are no DSCP 0..63 (the schema cannot report keys):
  // CheckDesiredState names them.
  std::vector<std::string> dscp_map_bad_keys = {};
};

// spec.kernelModules[]: "mlx5_ib" or { name: nvidia_peermem, required: false }
struct KernelModuleSpec {
  std::string name;
  bool required = true;
};

// spec.nics[].nicSelector: all given fields must match.
struct NicSelector {
  std::optional<std::string> vendor;     // "15b3" (lower-case hex, no 0x)
  std::optional<std::string> device_id;  // "1017"
  std::vector<std::string> root_devices;  // PF PCI addresses "0000:af:00.0"
  std::vector<std::string> pf_names;      // PF netdev names
  std::optional<int> near_gpu;            // nearGpu: index (topology issue)
  bool allow_remote = false;              // allowRemote
};

// spec.nics[].firmware: { ATS_ENABLED: true, NUM_OF_VFS: 16, LINK_TYPE_P1: ETH }:
// one mstconfig parameter, as NVIDIA nic-configuration-operator's rawNvConfig.
// `text` is what mstconfig is given and compared with: "true"/"false" for a
// YAML bool, the decimal for an int, the string as written.
struct FirmwareSetting {
  enum class Kind { kBool, kInt, kString };
  Kind kind = Kind::kString;
  std::string text;
};

// spec.nics[].vfRate: { min: 1000, max: 10000 }, Mbps (IFLA_VF_RATE's
// min_tx_rate / max_tx_rate, `ip link set <pf> vf N min_tx_rate .. max_tx_rate ..`);
// a field not given is 0, no guarantee / no limit.
struct VfRateSpec {
  int min = 0;
  int max = 0;
};

// spec.nics[].vfVlan: { id: 100, qos: 3, proto: 802.1Q }: every VF's port
// VLAN (IFLA_VF_VLAN_LIST's ifla_vf_vlan_info, `ip link set <pf> vf N vlan ID
// qos Q proto P`); id 0 = no VLAN (then qos 0); a field not given is 0 /
// 802.1Q.
struct VfVlanSpec {
  int id = 0;
  int qos = 0;
  std::string proto = "802.1Q";  // 802.1Q | 802.1ad
};

// spec.nics[].vfGroups[]: { range: "0-3", deviceType: vfio-pci, isRdma: false,
//                           resourceName: gpu1vfio }
// Some of a PF's VFs, by index, as the sriov-network-operator's pfNames
// "ens1f0#0-3". Fields left out take the nic's (EffectiveVfGroup), the
// per-VF settings (vfMtu, vfLinkState, vfRate, vfVlan, vfMac) included.
struct VfGroupSpec {
  std::string range;  // as written: "0-3" or "5"
  int first = 0;      // parsed from range (checks.cc refuses bad ones)
  int last = -1;
  std::optional<std::string> device_type;    // deviceType: netdevice | vfio-pci
  std::optional<bool> is_rdma;               // isRdma
  std::optional<std::string> resource_name;  // resourceName
  // The per-VF settings of NicSpec (below), for this group's VFs.
  std::optional<int> vf_mtu = std::nullopt;                 // vfMtu
  std::optional<std::string> vf_link_state = std::nullopt;  // vfLinkState
  std::optional<VfRateSpec> vf_rate = std::nullopt;         // vfRate
  std::optional<VfVlanSpec> vf_vlan = std::nullopt;         // vfVlan
  std::optional<std::string> vf_mac = std::nullopt;         // vfMac
  // addresses: ["172.16.1.71/24", "172.16.1.72/24"]: the group is used on the
  // host network; VF `first + i` gets addresses[i] (module railnet), with
  // the rail's routing and sysctls. Not inherited from the nic.
  std::vector<std::string> addresses = {};
  bool Contains(int vf) const { return vf >= first && vf <= last; }
  // "0-3", also for a group written "5" ("5-5": the operator's form).
  std::string RangeText() const { return std::to_string(first) + "-" + std::to_string(last); }
};

// spec.nics[].names: { netdev: "rail{n}", rdma: "mlx5_rail{n}" }: the
// persistent names of the nic's PF netdev and RDMA device (module names):
// udev rules by PCI address for every boot, and a live rename now. Unset:
// the kernel's (udev's) names stay.
struct NicNamesSpec {
  std::optional<std::string> netdev;
  std::optional<std::string> rdma;
};

// spec.nics[].routing: { table: 101, tableName: rail1, gateway: 172.16.1.254,
//                       routes: [172.16.0.0/16], priority: 1000 }: policy
// routing for the nic's addresses (module railnet). `table` unset: 100 + the
// rail number for a nic of spec.rails, else no table.
struct NicRoutingSpec {
  std::optional<long long> table;
  std::optional<std::string> table_name;  // tableName
  std::optional<std::string> gateway;
  std::vector<std::string> routes;
  std::optional<int> priority;
};

// spec.nics[]
struct NicSpec {
  std::string name;
  NicSelector selector;
  std::optional<std::string> link_type;    // linkType: eth | ib
  std::optional<int> num_vfs;              // numVfs
  std::optional<int> mtu;                  // mtu
  std::optional<std::string> device_type;  // deviceType: netdevice | vfio-pci
  std::optional<bool> is_rdma;             // isRdma
  std::optional<std::string> resource_name;  // resourceName
  std::optional<bool> vf_trust;            // vfTrust
  std::optional<bool> vf_spoof_chk;        // vfSpoofChk
  // vfMtu: the MTU of every VF netdev (IFLA_MTU on the VF), at most the
  // PF's; what the SriovNetworkNodePolicy's spec.mtu says.
  std::optional<int> vf_mtu;
  // vfLinkState: auto | enable | disable, every VF's IFLA_VF_LINK_STATE.
  std::optional<std::string> vf_link_state;
  std::optional<VfRateSpec> vf_rate;  // vfRate
  std::optional<VfVlanSpec> vf_vlan;  // vfVlan
  // vfMac: keep | derived, every VF's MAC in the PF's table (IFLA_VF_MAC):
  // keep = its netdev's current MAC, derived = from the PF's burnt-in MAC
  // and the VF index (modules/vf DeriveVfMac); the VF is rebound to take it.
  std::optional<std::string> vf_mac;
  // firmware: { PARAM: value }, by parameter name (mstconfig's spelling).
  std::map<std::string, FirmwareSetting> firmware;
  std::optional<NicPcieSpec> pcie;         // pcie
  std::optional<IpoibSpec> ipoib;          // ipoib
  std::optional<NicRoceSpec> roce;         // roce

  // vfGroups (empty: all VFs alike)
  std::vector<VfGroupSpec> vf_groups;
  // firmwareReset: true: the card's NV configuration to its defaults
  // (mstconfig reset) before what the nic sets.
  bool firmware_reset = false;
  std::optional<FirmwareVersionSpec> firmware_version;  // firmwareVersion
  std::optional<NicNamesSpec> names;       // names
  // eswitchMode: legacy | switchdev, the PF's devlink E-Switch mode
  // (module eswitch; unset: unmanaged).
  std::optional<std::string> eswitch_mode;
  // addresses: the global addresses of the PF's Ethernet netdev, CIDR as
  // written (module railnet; unset: unmanaged).
  std::optional<std::vector<std::string>> addresses;
  std::optional<NicRoutingSpec> routing;  // routing
  // sysctl: { arp_ignore: 1 }: net.ipv4.conf.<PF netdev>.<key> (module railnet).
  std::map<std::string, long long> sysctl;
};

// A group with the nic's deviceType, isRdma, resourceName and per-VF
// settings filled in where the group leaves them out.
inline VfGroupSpec EffectiveVfGroup(const NicSpec& nic, const VfGroupSpec& g) {
  VfGroupSpec e = g;
  if (!e.device_type) e.device_type = nic.device_type;
  if (!e.is_rdma) e.is_rdma = nic.is_rdma;
  // A group on the host network (addresses) is no device-plugin resource.
  if (!e.resource_name && e.addresses.empty()) e.resource_name = nic.resource_name;
  if (!e.vf_mtu) e.vf_mtu = nic.vf_mtu;
  if (!e.vf_link_state) e.vf_link_state = nic.vf_link_state;
  if (!e.vf_rate) e.vf_rate = nic.vf_rate;
  if (!e.vf_vlan) e.vf_vlan = nic.vf_vlan;
  if (!e.vf_mac) e.vf_mac = nic.vf_mac;
  return e;
}

// A PF's VFs 0..count-1 cut by the nic's vfGroups: each group's range (in
// range order) and the runs of VFs between and after them, which take the
// nic's fields. `spec` is the effective group (EffectiveVfGroup), or for a
// run in no group the nic's fields; `group` its index in vf_groups, -1 for a
// run in no group. Without groups: one segment 0..count-1 with the nic's
// fields. Groups reaching past count-1 are cut there (the loader and the
// planners report them), overlapping ones skipped after the first.
struct VfSegment {
  int first = 0;
  int last = 0;
  int group = -1;
  VfGroupSpec spec;
};
inline std::vector<VfSegment> VfSegments(const NicSpec& nic, int count) {
  std::vector<size_t> order;
  for (size_t k = 0; k < nic.vf_groups.size(); ++k) {
    const VfGroupSpec& g = nic.vf_groups[k];
    if (g.first >= 0 && g.first <= g.last && g.first < count) order.push_back(k);
  }
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return nic.vf_groups[a].first < nic.vf_groups[b].first; });
  std::vector<VfSegment> out;
  auto rest = [&](int first, int last) {
    if (first > last) return;
    VfSegment s{first, last, -1, EffectiveVfGroup(nic, VfGroupSpec{})};
    s.spec.first = first;
    s.spec.last = last;
    s.spec.range = s.spec.RangeText();
    out.push_back(std::move(s));
  };
  int next = 0;  // the first VF not yet in a segment
  for (size_t k : order) {
    const VfGroupSpec& g = nic.vf_groups[k];
    if (g.first < next) continue;  // overlaps the one before
    rest(next, g.first - 1);
    VfSegment s{g.first, std::min(g.last, count - 1), static_cast<int>(k),
                EffectiveVfGroup(nic, g)};
    out.push_back(std::move(s));
    next = out.back().last + 1;
  }
  rest(next, count - 1);
  return out;
}

// spec.ipPools[]
struct IpPoolSpec {
  std::string name;
  std::string subnet;                 // "172.16.11.0/16" (IPv4 or IPv6 CIDR)
  std::vector<std::string> ips;       // "a.b.c.d-a.b.c.e" ranges or single IPs
  std::optional<std::string> gateway;
  std::optional<int> vlan;
  std::vector<std::string> exclude_ips;  // excludeIPs
};

// spec.multusConfigs[].ippools: { ipv4: [..], ipv6: [..] }
struct IpPoolRefs {
  std::vector<std::string> ipv4;
  std::vector<std::string> ipv6;
};

// spec.multusConfigs[]
struct MultusConfigSpec {
  std::string name;
  std::string namespace_name = "default";  // namespace
  std::string cni_type;  // macvlan | ipvlan | sriov | ib-sriov | ipoib
  std::string nic;       // a spec.nics[].name
  IpPoolRefs ippools;
  std::optional<std::string> pkey;                   // ib-sriov only
  std::optional<std::string> rdma_resource_inject;   // annotation value
  std::optional<int> vlan;

  // resourceName: sriov/ib-sriov on a nic with vfGroups: which of the nic's
  // resources (a group's) the config's pods get.
  std::optional<std::string> resource_name;
};

// spec.kubernetes.rdmaSharedDevicePlugin
struct RdmaSharedDevicePluginSpec {
  std::string resource_name = "hca_shared_devices";
  int rdma_hca_max = 500;
};

// spec.kubernetes
// spec.kubernetes.ibKubernetes: Mellanox/ib-kubernetes' ConfigMap.
struct IbKubernetesSpec {
  std::string sm_plugin = "ufm";  // DAEMON_SM_PLUGIN: ufm | noop
  std::string namespace_name = "kube-system";
};

struct KubernetesSpec {
  std::string resource_prefix = "spidernet.io";
  // nodeSelector: the node pool these manifests are for. Set: cluster objects
  // are named for the pool (identical on every node of it); empty: they are
  // node-qualified and pinned to kubernetes.io/hostname = metadata.name.
  std::map<std::string, std::string> node_selector;
  // sriovOperatorNamespace: where the sriov-network-operator reads its
  // SriovNetworkNodePolicies (Spiderpool's install namespace in its guides;
  // the standalone operator's is "sriov-network-operator").
  std::string sriov_operator_namespace = "kube-system";
  // poolName: names the pool's per-pool objects (nccl-env-<poolName>); unset:
  // derived from the nodeSelector's values (docs/kubernetes.md).
  std::optional<std::string> pool_name;
  std::optional<RdmaSharedDevicePluginSpec> rdma_shared_device_plugin;
  // spiderpool.version: the Spiderpool release the cluster runs ("v0.9.10",
  // "1.0"); each object and chart value is written as that release reads it
  // (docs/kubernetes.md). Unset: the latest line pinned (kSpiderpoolDefault).
  std::optional<std::string> spiderpool_version;
  // workloadNamespaces: where the pods that use these networks run; the
  // pods' NCCL environment (nccl-env-*) is written into each.
  std::vector<std::string> workload_namespaces;
  // nccl.version: the NCCL the workloads run ("2.18.5"); older than 2.21
  // (which picks the RoCE v2 GID itself) gets NCCL_IB_GID_INDEX in nccl-env-*.
  std::optional<std::string> nccl_version;
  // ibKubernetes: present, the ib-kubernetes-config ConfigMap (its GUID pool
  // kept clear of the VF GUIDs apply sets) is written (docs/kubernetes.md).
  std::optional<IbKubernetesSpec> ib_kubernetes;
};

// The Spiderpool release line written when spec.kubernetes.spiderpool.version
// is unset.
inline constexpr const char* kSpiderpoolDefault = "v1.0";

// spec.network:
//   network: { owner: provisioner }   # default: stack
// Who persists the rails' addresses, tables and rules (modules/railnet
// persist_planner.h): "stack", the node's own network stack (netplan,
// NetworkManager, systemd-networkd, ifupdown) in its native files;
// "provisioner", the rail interfaces marked unmanaged in that stack and the
// live configuration kept by provisioner alone.
struct NetworkSpec {
  std::string owner = "stack";
};

// An item that spec.rails expanded into (engine/config/rails.h).
struct RailOrigin {
  std::string path;         // "spec.nics[3]"
  std::string source_path;  // "spec.rails.nic"
  int rail = 0;             // 1-based
};

struct DesiredState {
  std::string file;  // the path as given on the command line
  std::string api_version;
  std::string kind;
  std::string name;  // metadata.name

  std::optional<RdmaSpec> rdma;
  std::optional<PcieSpec> pcie;
  std::optional<KernelSpec> kernel;
  std::optional<FirmwareActivationSpec> firmware;  // spec.firmware
  AgentSpec agent;                                 // spec.agent (defaults when absent)
  std::vector<KernelModuleSpec> kernel_modules;
  std::vector<NicSpec> nics;
  std::vector<IpPoolSpec> ip_pools;
  std::vector<MultusConfigSpec> multus_configs;
  std::optional<KubernetesSpec> kubernetes;
  std::optional<NetworkSpec> network;  // spec.network

  MarkIndex marks;

  // spec.rails with count: allGpus, not expanded yet: expansion needs the
  // host's GPU count (engine/config/rails.h; the CLI reloads after discovery).
  bool rails_need_gpu_count = false;
  // With rails_need_gpu_count: host.yaml as parsed, before the expansion, so
  // that the expansion once the GPU count is known (ExpandRails in
  // engine/core/session.h) neither reads nor parses the file again.
  std::shared_ptr<const config::YamlDocument> unexpanded;
  // The expanded items, so that plan-time diagnostics can name the rails field.
  std::vector<RailOrigin> rail_origins;

  // Field path of nics[i] ("spec.nics[2]") for diagnostics.
  static std::string NicPath(size_t i) { return "spec.nics[" + std::to_string(i) + "]"; }
};

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODEL_DESIRED_H_
