// RDMA facts (rdma module): devices under /sys/class/infiniband with their
// ports and GID tables, the netns mode (live and persistent) and the
// rdma-core device files. Rendered by discover (contract "rdmaDevices").
#ifndef PROVISIONER_ENGINE_MODEL_RDMA_FACTS_H_
#define PROVISIONER_ENGINE_MODEL_RDMA_FACTS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace provisioner {

// One used slot of a port's GID table (gids/<index>).
struct RdmaGid {
  int index = 0;
  std::string gid;     // "0000:0000:0000:0000:0000:ffff:ac51:0077"
  std::string type;    // "IB/RoCE v1" | "RoCE v2" | "" when gid_attrs/types is unreadable
  std::string netdev;  // gid_attrs/ndevs/<index>; "" on InfiniBand
};

// What show_gids prints per address: the RoCE v2 GID index an application
// (NCCL_IB_GID_INDEX) must use for an IP address of a netdev. Computed from
// the GID table on every discovery (indexes shift as addresses change).
struct RoceAddress {
  std::string netdev;
  std::string address;  // "172.81.0.119" or an IPv6 address ("fd00::1")
  int family = 4;       // 4 | 6
  int gid_index = -1;   // the RoCE v2 slot
};

struct RdmaPort {
  int port = 1;
  std::string link_layer;            // "Ethernet" | "InfiniBand"
  std::string state;                 // "ACTIVE" (from "4: ACTIVE")
  std::string phys_state;            // "LinkUp" (from "5: LinkUp")
  std::optional<int> lid;            // InfiniBand LID (sysfs hex)
  std::optional<int> sm_lid;         // subnet manager LID; 0 = no SM seen
  std::string rate;                  // "100 Gb/sec (4X EDR)"
  std::string netdev;                // the port's netdev in this namespace ("" = none)
  std::vector<RdmaGid> gids;         // used slots only, by index
  bool gids_captured = true;         // false: a tree without ports/N/gids/ (a partial capture)
  // InfiniBand ports: the P_Key table the subnet manager set (ports/N/pkeys/*,
  // entries of a zero partition left out), as "0xffff"; nullopt when the
  // table is not there (not captured, or not an InfiniBand port).
  std::optional<std::vector<std::string>> pkeys;
  std::vector<RoceAddress> roce_v2;  // by netdev, family, address
};

struct RdmaDevice {
  std::string name;         // "mlx5_0"
  std::string pci_address;  // "" for a device without a PCI parent (rxe, scif)
  bool is_vf = false;       // its PCI function has a physfn link
  std::string node_guid;    // "0c42:a103:005b:7c2e"
  std::string fw_ver;
  std::string hca_type;
  std::vector<RdmaPort> ports;
  bool device_captured = true;  // false: a tree without the `device` link (a partial capture)
};

// Netdev addresses in the namespace provisioner runs in (live root: the
// kernel's; a tree: /proc/net/if_inet6 and, as stand-in, /proc/net/fib_trie).
struct NetdevAddresses {
  std::vector<std::string> ipv4;
  std::vector<std::string> ipv6;
};

struct RdmaFacts {
  bool discovered = false;          // the rdma module ran
  std::vector<RdmaDevice> devices;  // by name
  // etc/modprobe.d ib_core netns_mode: "shared" | "exclusive"; nullopt = not set.
  std::optional<std::string> persistent_netns_mode;
  std::string persistent_netns_source;  // the file that sets it
  // What /etc/modprobe.d/ib_core.conf itself sets (the file provisioner owns).
  std::optional<std::string> ib_core_conf_netns_mode;
  // ib_core is in the running kernel's initramfs (it loads from there at
  // boot, with the modprobe.d copied in when the initramfs was built): why we
  // think so ("/etc/initramfs-tools/modules lists mlx5_ib"); "" when no
  // evidence was found.
  std::string ib_core_initramfs_evidence;
  // The command that rebuilds that initramfs for the running kernel
  // ("update-initramfs -u -k 6.1.0-18-amd64", "dracut -f --kver ...").
  std::string initramfs_rebuild;
  // How the live mode was read ("netlink", "sysfs", or why it is unknown).
  std::string netns_mode_source;
  bool ofed = false;         // MLNX_OFED installed (mlx_compat module or ofed_info)
  std::string ofed_version;  // "" when unknown
  // Entries of /dev/infiniband ("uverbs0", "umad0", "issm0", "rdma_cm").
  std::optional<std::vector<std::string>> dev_files;  // nullopt: no /dev/infiniband
  bool dev_captured = true;  // false: a tree without /dev (nothing to check)
  // Named network namespaces (/run/netns): while any other namespace exists
  // the kernel refuses to switch the netns mode.
  std::vector<std::string> named_netns;
  std::map<std::string, NetdevAddresses> addresses;  // by netdev name
  bool addresses_known = false;                      // a source of addresses existed
};

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODEL_RDMA_FACTS_H_
