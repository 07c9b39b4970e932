// IPoIB interfaces as the kernel's ib_ipoib driver shows them
// (drivers/infiniband/ulp/ipoib), and the limits host.yaml is checked with.
//   /sys/class/net/<if>/mode          "datagram" | "connected"
//   /sys/class/net/<if>/pkey          "0xffff" (the PF's), "0x8001" (a child)
//   /sys/class/net/<if>/create_child  write a P_Key: child "<if>.<pkey %04x>"
//   /sys/class/net/<if>/delete_child  write it again: the child goes
//   /sys/class/net/<child>/parent     the parent's name (children only)
#ifndef PROVISIONER_ENGINE_MODEL_IPOIB_FACTS_H_
#define PROVISIONER_ENGINE_MODEL_IPOIB_FACTS_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provisioner {

// ARPHRD_INFINIBAND: /sys/class/net/<if>/type of an IPoIB netdev.
inline constexpr int kArphrdInfiniband = 32;
// ETH_MIN_MTU + IPOIB_ENCAP_LEN: the smallest MTU ipoib_change_mtu takes.
inline constexpr int kIpoibMinMtu = 72;
// IPOIB_UD_MTU of a 4K IB MTU (4096 - IPOIB_ENCAP_LEN): datagram mode's
// largest; the broadcast group's MTU (set by the SM) can make it smaller.
inline constexpr int kIpoibDatagramMaxMtu = 4092;
// IPOIB_CM_MTU (ipoib_cm_max_mtu): connected mode's largest.
inline constexpr int kIpoibConnectedMaxMtu = 65520;
// The full-membership bit of a P_Key.
inline constexpr int kPkeyFullMember = 0x8000;

// "0x8001" (hex, 0x or 0X, 1-4 digits) -> 0x8001; nullopt for anything else.
std::optional<int> ParsePkey(std::string_view text);
// What create_child accepts as a partition (ipoib_main.c create_child_store:
// 1..0xffff but not 0x8000); host.yaml also refuses the default partition
// 0x7fff/0xffff, which is the PF's own interface.
bool IsChildPkey(int pkey);
// The child's name as ipoib_vlan_add makes it: "%s.%04x", cut to
// IFNAMSIZ - 1 = 15 characters.
std::string IpoibChildName(const std::string& parent, int pkey);
// "0x8001": how pkeys are shown and written.
std::string PkeyText(int pkey);

// One IPoIB netdev: a PF's, or a child of it.
struct IpoibInterface {
  std::string name;
  std::string parent;       // "" for the PF's netdev
  std::string mode;         // "datagram" | "connected" | "" (no mode file)
  std::optional<int> pkey;  // the pkey file
  std::string address;      // hardware address (20 bytes, IPoIB)
  // Connected mode possible: the RC flag (0x80) of the QPN's first byte in
  // the hardware address (IPOIB_CM_SUPPORTED). mlx5's enhanced IPoIB has
  // none: writing "connected" fails EINVAL.
  bool cm_supported = false;
  std::optional<int> mtu;
  std::optional<bool> admin_up;
  // Global addresses (CIDR, canonical); nullopt when they could not be read.
  std::optional<std::vector<std::string>> addresses;
  std::vector<std::string> children;  // names, for a PF's netdev
};

// The RDMA port behind a PF's IPoIB netdev and its P_Key table (set by the
// subnet manager): ports/<n>/pkeys/<i>, non-zero entries.
struct IpoibPort {
  std::string rdma_device;  // "mlx5_0"
  int port = 1;
  std::string link_layer;  // "InfiniBand" | "Ethernet"
  std::vector<int> pkeys;
  bool pkeys_read = false;
};

struct IpoibFacts {
  bool discovered = false;
  std::map<std::string, IpoibInterface> interfaces;  // by name: PFs' and children
  std::map<std::string, IpoibPort> ports;            // by the PF netdev's name
  // Netdevs of selected NICs that are no IPoIB netdev, with their type.
  std::map<std::string, int> not_ipoib;
};

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODEL_IPOIB_FACTS_H_
