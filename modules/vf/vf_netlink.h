// Per-VF settings over rtnetlink on the PF's netdev (live root only): IB node
// and port GUIDs (IFLA_VF_IB_NODE_GUID / IFLA_VF_IB_PORT_GUID), trust
// (IFLA_VF_TRUST) and spoof checking (IFLA_VF_SPOOFCHK). An interface, so
// the module's live-root path is tested with a fake; the real one is libnl.
#ifndef PROVISIONER_MODULES_VF_VF_NETLINK_H_
#define PROVISIONER_MODULES_VF_VF_NETLINK_H_

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "modules/vf/vf_planner.h"

struct nlmsghdr;
struct nl_msg;

namespace provisioner {

// What the kernel reports for one VF in RTM_GETLINK's IFLA_VFINFO_LIST
// (absent attributes stay nullopt: older kernels, drivers without them).
struct VfLinkState {
  int vf = 0;
  std::optional<bool> trust;
  std::optional<bool> spoof_chk;
  std::optional<uint64_t> node_guid;
  std::optional<uint64_t> port_guid;
  std::optional<int> link_state;        // IFLA_VF_LINK_STATE_AUTO (0) / ENABLE (1) / DISABLE (2)
  std::optional<uint32_t> min_tx_rate;  // IFLA_VF_RATE, Mbps
  std::optional<uint32_t> max_tx_rate;
  // IFLA_VF_VLAN_LIST's first IFLA_VF_VLAN_INFO, else IFLA_VF_VLAN (802.1Q):
  // the VF's port VLAN (0 = none), its priority and its protocol (ETH_P_8021Q
  // or ETH_P_8021AD, host byte order).
  std::optional<uint32_t> vlan;
  std::optional<uint32_t> vlan_qos;
  std::optional<uint16_t> vlan_proto;
  // IFLA_VF_MAC: the MAC in the PF's table for the VF ("aa:bb:cc:dd:ee:ff",
  // "00:00:00:00:00:00" = none set); not read for an InfiniBand PF
  // (ARPHRD_INFINIBAND: GUIDs instead).
  std::optional<std::string> mac;
};

// "auto" | "enable" | "disable" for IFLA_VF_LINK_STATE_* (as `ip link` prints
// it); "" for another value.
std::string VfLinkStateName(int state);
// The IFLA_VF_LINK_STATE_* value of "auto" | "enable" | "disable".
std::optional<int> ParseVfLinkState(const std::string& name);
// "802.1Q" | "802.1ad" for ETH_P_8021Q / ETH_P_8021AD (host byte order, as
// `ip link` spells them); "" for another value.
std::string VfVlanProtoName(uint16_t proto);
// ETH_P_8021Q / ETH_P_8021AD of "802.1Q" | "802.1ad".
std::optional<uint16_t> ParseVfVlanProto(const std::string& name);

class VfNetlink {
 public:
  virtual ~VfNetlink() = default;
  virtual StatusOr<std::vector<VfLinkState>> ReadVfs(const std::string& pf_netdev) = 0;
  // One RTM_SETLINK per call: the kernel applies only the node GUID when
  // both GUIDs come in one VF message (kernel-facts.md), so callers send the
  // node GUID, then the port GUID.
  virtual Status SetNodeGuid(const std::string& pf_netdev, int vf, uint64_t guid) = 0;
  virtual Status SetPortGuid(const std::string& pf_netdev, int vf, uint64_t guid) = 0;
  virtual Status SetTrust(const std::string& pf_netdev, int vf, bool on) = 0;
  virtual Status SetSpoofChk(const std::string& pf_netdev, int vf, bool on) = 0;
  // IFLA_VF_LINK_STATE (`ip link set <pf> vf N state auto|enable|disable`).
  virtual Status SetLinkState(const std::string& pf_netdev, int vf, int state) = 0;
  // IFLA_VF_RATE, both rates in one message (`ip link set <pf> vf N
  // min_tx_rate MIN max_tx_rate MAX`), Mbps; 0 = none.
  virtual Status SetRate(const std::string& pf_netdev, int vf, uint32_t min, uint32_t max) = 0;
  // The VF's port VLAN (`ip link set <pf> vf N vlan ID qos Q proto P`; id 0
  // = none), `proto` ETH_P_8021Q or ETH_P_8021AD (host byte order).
  virtual Status SetVlan(const std::string& pf_netdev, int vf, uint32_t vlan, uint32_t qos,
                         uint16_t proto) = 0;
  // The VF's MAC in the PF's table (`ip link set <pf> vf N mac M`,
  // IFLA_VF_MAC); `mac` as ParseMacAddress (vf_planner.h) takes it.
  virtual Status SetMac(const std::string& pf_netdev, int vf, const std::string& mac) = 0;
};

// Appends to an RTM_SETLINK `msg` (after its ifinfomsg) the IFLA_VFINFO_LIST
// that sets VF `vf`'s MAC as iproute2 does: one IFLA_VF_INFO holding
// IFLA_VF_MAC, struct ifla_vf_mac {vf, mac[32]} with the 6 bytes first and
// the rest zero. A negative libnl error on failure.
int PutVfMac(struct nl_msg* msg, int vf, const std::array<uint8_t, 6>& mac);

// Appends to an RTM_SETLINK `msg` (after its ifinfomsg) the IFLA_VFINFO_LIST
// that sets VF `vf`'s VLAN as iproute2 does: the legacy IFLA_VF_VLAN
// {vf, vlan, qos} for 802.1Q (every kernel takes it), IFLA_VF_VLAN_LIST with
// one IFLA_VF_VLAN_INFO (vlan_proto in network byte order) for 802.1ad.
// libnl's rtnl_link_vf_set_vlans is not used: libnl 3.7 copies vf_vlan_proto
// into IFLA_VF_VLAN_INFO without htons. A negative libnl error on failure.
int PutVfVlan(struct nl_msg* msg, int vf, uint32_t vlan, uint32_t qos, uint16_t proto);

// The VFs of one RTM_NEWLINK message (the kernel's answer to RTM_GETLINK
// with RTEXT_FILTER_VF): its IFLA_VFINFO_LIST. Exposed for tests.
std::vector<VfLinkState> ParseVfInfoList(struct nlmsghdr* msg);

// libnl-route-3: rtnl_link_vf_* + rtnl_link_change to set; a raw RTM_GETLINK
// (IFLA_EXT_MASK RTEXT_FILTER_VF) parsed with nla_parse to read, because
// libnl 3.7 does not parse the IB GUID attributes.
std::unique_ptr<VfNetlink> NewLibnlVfNetlink();

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_VF_VF_NETLINK_H_
