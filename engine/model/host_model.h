// The host model: what discovery found. Filled by modules, read by planners,
// rendered by the engine (discover -o json has the contract's keys).
#ifndef PROVISIONER_ENGINE_MODEL_HOST_MODEL_H_
#define PROVISIONER_ENGINE_MODEL_HOST_MODEL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/model/boot_facts.h"
#include "engine/model/health_facts.h"
#include "engine/model/kmod_facts.h"
#include "engine/model/link_facts.h"
#include "engine/model/names_facts.h"
#include "engine/model/ipoib_facts.h"
#include "engine/model/pcie_facts.h"
#include "engine/model/railnet_facts.h"
#include "engine/model/rdma_facts.h"
#include "engine/model/roce_facts.h"
#include "engine/model/topology_facts.h"

namespace provisioner {

// Drivers that take a PCI function away from the network stack (vfio-pci for
// a VM or DPDK, pci-stub, UIO): such a VF has no netdev, and none to wait for.
bool IsUserspaceDriver(const std::string& driver);

// The driver a PF's VFs use as network devices (mlx5_core -> mlx5_core,
// igb -> igbvf, ixgbe -> ixgbevf, i40e/ice -> iavf, others: the PF's).
std::string VfNetdeviceDriver(const std::string& pf_driver);

// A VF as seen from its PF (contract: nics[].sriov.vfs[]).
struct VfInfo {
  std::string pci_address;
  int vf_index = 0;          // N of the PF's virtfnN link
  std::string driver;        // "" when unbound
  std::vector<std::string> netdevs;
  std::vector<std::string> rdma_devices;
  // Filled by the vf module (unknown = "" / nullopt):
  std::string driver_override;      // "" when unset (sysfs reads "(null)")
  std::string ib_node_guid;         // "xxxx:xxxx:xxxx:xxxx" (IB VFs)
  std::string ib_port_guid;
  std::optional<bool> trust;        // IFLA_VF_TRUST
  std::optional<bool> spoof_chk;    // IFLA_VF_SPOOFCHK
  std::optional<std::string> link_state;  // IFLA_VF_LINK_STATE: auto | enable | disable
  std::optional<int64_t> min_tx_rate;     // IFLA_VF_RATE, Mbps
  std::optional<int64_t> max_tx_rate;
  // IFLA_VF_VLAN_LIST (else IFLA_VF_VLAN: 802.1Q): the VF's port VLAN, id 0 = none
  std::optional<int> vlan_id;
  std::optional<int> vlan_qos;
  std::optional<std::string> vlan_proto;  // "802.1Q" | "802.1ad"
  // IFLA_VF_MAC: the VF's MAC in the PF's table ("aa:bb:cc:dd:ee:ff",
  // all zero = none set); what the VF driver takes when it binds.
  std::optional<std::string> mac;
  std::string netdev_mac;  // its netdev's address now ("" no netdev)
};

// SR-IOV capability of a PF (absent without sriov_totalvfs, e.g. SRIOV_EN=0).
struct SriovInfo {
  int total_vfs = 0;
  int num_vfs = 0;
  std::optional<int> offset;
  std::optional<int> stride;
  std::string vf_device;  // sriov_vf_device, hex without 0x
  std::optional<bool> drivers_autoprobe;
  std::vector<VfInfo> vfs;  // ordered by vf_index
  // The PF's RDMA node_guid when its port is InfiniBand ("" otherwise; vf module).
  std::string ib_node_guid;
  // The PF netdev's address and addr_assign_type (0 = NET_ADDR_PERM: the
  // burnt-in MAC; vf module, for vfMac: derived). "" / nullopt unknown.
  std::string pf_mac;
  std::optional<int> pf_addr_assign_type;
};

// One PCI function (libpci + sysfs).
struct PciFunction {
  std::string pci_address;   // "0000:af:00.0"
  std::string sysfs_path;    // resolved host path "/sys/devices/pci0000:ae/.../0000:af:00.0"
  std::string vendor;        // "15b3"
  std::string device_id;     // "1017"
  uint32_t class_code = 0;   // 0x020000 (class, subclass, prog-if)
  std::string vendor_name;   // from pci.ids ("" when unknown)
  std::string device_name;
  std::string driver;        // "" when unbound
  int numa_node = -1;
  std::vector<std::string> netdevs;
  std::vector<std::string> rdma_devices;
  std::optional<SriovInfo> sriov;  // PFs only
  std::string physfn;              // VFs: the PF's address; "" for a PF
  std::optional<int> vf_index;     // VFs: index under the PF
  std::string iommu_group;         // basename of the iommu_group link; "" without an IOMMU

  // A network function for this tool: a network controller (class 0x02xx,
  // Ethernet and InfiniBand ConnectX alike) or an InfiniBand controller of
  // the serial-bus class (0x0c06: QLogic/Intel qib and hfi1 HCAs, which
  // carry IPoIB netdevs and RDMA devices like any NIC).
  bool IsNetwork() const {
    return (class_code >> 16) == 0x02 || (class_code >> 8) == 0x0c06;
  }
  bool IsVf() const { return !physfn.empty(); }
  // Carries an RDMA device, or will once its RDMA driver is loaded: an
  // InfiniBand function (class 0x0207 or 0x0c06), a Mellanox/NVIDIA network
  // function (vendor 15b3), or one bound to a core driver whose RDMA part
  // loads separately (mlx4_core -> mlx4_ib, mlx5_core -> mlx5_ib, ...). At
  // boot, before mlx5_ib is loaded, a ConnectX has no infiniband/ yet.
  bool IsRdmaCapable() const;
  // IsRdmaCapable() and no RDMA device present (yet).
  bool RdmaDevicePending() const { return rdma_devices.empty() && IsRdmaCapable(); }
};

struct KernelInfo {
  std::string release;  // from /proc/sys/kernel/osrelease
};

// devlink E-Switch state of a PF (eswitch module).
struct EswitchPfFacts {
  std::optional<std::string> mode;  // "legacy" | "switchdev"; nullopt: not read
  std::string error;                // why the mode could not be read ("" = none)
  // mlx5's devlink param flow_steering_mode ("dmfs" | "smfs"); nullopt: none.
  std::optional<std::string> flow_steering_mode;
  std::optional<bool> hw_tc_offload;  // the PF netdev's feature, when known
  // The PF's VF representor netdevs: netdevs of the PF's PCI function whose
  // phys_port_name is pf<N>vf<M> (mlx5 en_rep.c, ice_repr.c), by VF index.
  std::map<int, std::string> representors;
};
struct EswitchFacts {
  bool discovered = false;                    // the eswitch module ran
  std::map<std::string, EswitchPfFacts> pfs;  // by PF BDF (SR-IOV PFs)
};

struct HostFacts {
  std::string root = "/";
  // What discovery skipped and why (a partial capture: a PCI function
  // without the files libpci needs, ...): shown by discover, and as plan
  // warnings. On the live root such a read is an error instead.
  std::vector<std::string> warnings;
  // Netdevs whose link state a tree does not hold (no /sys/class/net/<if>
  // or no mtu/flags in it: a partial capture); never on the live root.
  std::set<std::string> links_not_captured;
  KernelInfo kernel;
  std::vector<PciFunction> pci;  // every function, ordered by address

  // RDMA netns mode, once the rdma module discovers it ("shared"/"exclusive").
  std::optional<std::string> rdma_netns_mode;
  std::vector<std::string> loaded_modules;
  // Loaded modules in detail, parameters, modules.dep, modprobe.d (kmod module).
  KmodFacts kmod;
  // RDMA devices, ports, GIDs, netns persistence (rdma module).
  RdmaFacts rdma;
  // Registered PCI drivers: the entries of /sys/bus/pci/drivers (vf module).
  std::vector<std::string> pci_drivers;
  // PF and VF netdevs of the NICs, by name (link module).
  std::map<std::string, LinkFacts> links;
  // Firmware configuration per card, by the BDF of function .0 (firmware module).
  std::map<std::string, FirmwareFacts> firmware;
  // GPUs and GPU x NIC PCIe levels (topology module).
  TopologyFacts topology;
  // PCIe capabilities (ACS, Device Control) and IOMMU evidence (pcie module).
  PcieFacts pcie;
  // IPoIB netdevs of the NICs, their pkey children and P_Key tables (ipoib module).
  IpoibFacts ipoib;
  // DCB trust/PFC and ECN of the NIC PF netdevs, NCCL_IB_TC (roce module).
  RoceFacts roce;
  // PCIe link attributes of NICs, GPUs and the bridges above them, the
  // NVIDIA driver flavour: doctor's link health gates (health module).
  HealthFacts health;
  // The running kernel command line and the boot configuration that sets
  // the next one (kernel module).
  BootFacts boot;
  // The udev rules file of persistent names and the PF netdevs'
  // phys_port_name (names module).
  NamesFacts names;
  // The sriov-network-operator's IB VF GUID pool on this host,
  // /etc/sriov-operator/infiniband/guids, as read (sriov-operator module):
  // nullopt when absent.
  std::optional<std::string> sriov_operator_ib_guid_pool;
  // devlink E-Switch modes and VF representors of the SR-IOV PFs (eswitch module).
  EswitchFacts eswitch;
  // Rails' addresses, sysctls, policy-routing tables and rules (railnet module).
  RailnetFacts railnet;

  const PciFunction* FindPci(const std::string& address) const;
  PciFunction* FindPci(const std::string& address);
  // Network-class functions that are SR-IOV PFs or carry an RDMA device
  // (contract: discover "nics"), in address order.
  std::vector<const PciFunction*> Nics() const;
};

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODEL_HOST_MODEL_H_
