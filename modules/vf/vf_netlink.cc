#include "modules/vf/vf_netlink.h"

#include <arpa/inet.h>
#include <linux/if_arp.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/link/sriov.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <utility>

#include "engine/netlink/netlink_socket.h"

namespace provisioner {
namespace {

// The kernel's errno of the last NLMSG_ERROR (libnl maps it to its own codes).
struct ErrState {
  int err = 0;
};

int OnError(struct sockaddr_nl*, struct nlmsgerr* e, void* arg) {
  static_cast<ErrState*>(arg)->err = e->error < 0 ? -e->error : e->error;
  return NL_STOP;  // nl_recvmsgs then returns the (mapped) error
}

// A connected NETLINK_ROUTE socket that records the kernel's errno.
class Socket {
 public:
  Status Connect() {
    ASSIGN_OR_RETURN(sk_, ConnectNetlink(NETLINK_ROUTE, "NETLINK_ROUTE"));
    nl_socket_modify_err_cb(sk_.get(), NL_CB_CUSTOM, OnError, &err_);
    return OkStatus();
  }
  struct nl_sock* get() {
    return sk_.get();
  }
  // A Status for libnl's result `r`, with the kernel's errno when it sent one
  // (else libnl's code mapped back; some calls bypass the error callback).
  Status Fail(int r, const std::string& what) const {
    if (err_.err != 0) return ErrnoToStatus(err_.err, what);
    return NlError(r, what);
  }

 private:
  NlSocket sk_;
  ErrState err_;
};

struct DumpState {
  std::vector<VfLinkState> vfs;
};

// An attribute's payload, copied out: netlink attributes are only 4-byte
// aligned, and struct ifla_vf_guid holds a u64.
template <typename T>
std::optional<T> Payload(struct nlattr* a) {
  if (a == nullptr || nla_len(a) < static_cast<int>(sizeof(T))) return std::nullopt;
  T v;
  std::memcpy(&v, nla_data(a), sizeof v);
  return v;
}

// The ifinfomsg header and IFLA_IFNAME of a request about the PF by name
// (as `ip link` sends it); a negative libnl error when `msg` is full.
int AppendPfName(struct nl_msg* msg, const std::string& pf) {
  struct ifinfomsg ifi;
  std::memset(&ifi, 0, sizeof ifi);
  ifi.ifi_family = AF_UNSPEC;
  int r = nlmsg_append(msg, &ifi, sizeof ifi, NLMSG_ALIGNTO);
  if (r >= 0) r = nla_put_string(msg, IFLA_IFNAME, pf.c_str());
  return r;
}

int OnLink(struct nl_msg* msg, void* arg) {
  auto* state = static_cast<DumpState*>(arg);
  std::vector<VfLinkState> vfs = ParseVfInfoList(nlmsg_hdr(msg));
  state->vfs.insert(state->vfs.end(), vfs.begin(), vfs.end());
  return NL_OK;
}

class LibnlVfNetlink final : public VfNetlink {
 public:
  StatusOr<std::vector<VfLinkState>> ReadVfs(const std::string& pf_netdev) override {
    const std::string what = "netlink RTM_GETLINK " + pf_netdev + " (VF info)";
    Socket sk;
    RETURN_IF_ERROR(sk.Connect().WithContext(what));
    struct nl_msg* msg = nlmsg_alloc_simple(RTM_GETLINK, 0);
    if (msg == nullptr) return ErrnoToStatus(ENOMEM, what);
    int r = AppendPfName(msg, pf_netdev);
    if (r >= 0) r = nla_put_u32(msg, IFLA_EXT_MASK, RTEXT_FILTER_VF);
    if (r >= 0) r = nl_send_auto(sk.get(), msg);
    nlmsg_free(msg);
    if (r < 0) return sk.Fail(r, what);
    DumpState state;
    nl_socket_modify_cb(sk.get(), NL_CB_VALID, NL_CB_CUSTOM, OnLink, &state);
    r = nl_recvmsgs_default(sk.get());
    if (r < 0) return sk.Fail(r, what);
    return state.vfs;
  }

  Status SetNodeGuid(const std::string& pf, int vf, uint64_t guid) override {
    return Change(pf, vf, "node_guid",
                  [guid](struct rtnl_link_vf* v) { rtnl_link_vf_set_ib_node_guid(v, guid); });
  }
  Status SetPortGuid(const std::string& pf, int vf, uint64_t guid) override {
    return Change(pf, vf, "port_guid",
                  [guid](struct rtnl_link_vf* v) { rtnl_link_vf_set_ib_port_guid(v, guid); });
  }
  Status SetTrust(const std::string& pf, int vf, bool on) override {
    return Change(pf, vf, on ? "trust on" : "trust off",
                  [on](struct rtnl_link_vf* v) { rtnl_link_vf_set_trust(v, on ? 1 : 0); });
  }
  Status SetSpoofChk(const std::string& pf, int vf, bool on) override {
    return Change(pf, vf, on ? "spoofchk on" : "spoofchk off",
                  [on](struct rtnl_link_vf* v) { rtnl_link_vf_set_spoofchk(v, on ? 1 : 0); });
  }
  Status SetLinkState(const std::string& pf, int vf, int state) override {
    return Change(pf, vf, "state " + VfLinkStateName(state), [state](struct rtnl_link_vf* v) {
      rtnl_link_vf_set_linkstate(v, static_cast<uint32_t>(state));
    });
  }
  Status SetRate(const std::string& pf, int vf, uint32_t min, uint32_t max) override {
    return Change(pf, vf,
                  "min_tx_rate " + std::to_string(min) + " max_tx_rate " + std::to_string(max),
                  [min, max](struct rtnl_link_vf* v) {
                    struct nl_vf_rate rate;
                    std::memset(&rate, 0, sizeof rate);
                    rate.api = RTNL_LINK_VF_RATE_API_NEW;  // IFLA_VF_RATE, not IFLA_VF_TX_RATE
                    rate.min_tx_rate = min;
                    rate.max_tx_rate = max;
                    rtnl_link_vf_set_rate(v, &rate);
                  });
  }
  Status SetVlan(const std::string& pf, int vf, uint32_t vlan, uint32_t qos,
                 uint16_t proto) override {
    return Send(pf,
                "netlink: ip link set " + pf + " vf " + std::to_string(vf) + " vlan " +
                    std::to_string(vlan) + " qos " + std::to_string(qos) + " proto " +
                    VfVlanProtoName(proto),
                [&](struct nl_msg* msg) { return PutVfVlan(msg, vf, vlan, qos, proto); });
  }
  Status SetMac(const std::string& pf, int vf, const std::string& mac) override {
    const std::string what =
        "netlink: ip link set " + pf + " vf " + std::to_string(vf) + " mac " + mac;
    const std::optional<std::array<uint8_t, 6>> bytes = ParseMacAddress(mac);
    if (!bytes) return InvalidArgumentError(what + ": not a MAC address");
    return Send(pf, what, [&](struct nl_msg* msg) { return PutVfMac(msg, vf, *bytes); });
  }

 private:
  // Our own RTM_SETLINK on the PF by name (as `ip link set` sends it), its
  // VF attributes appended by `put` (PutVfVlan, PutVfMac); waits for the ACK.
  Status Send(const std::string& pf, const std::string& what,
              const std::function<int(struct nl_msg*)>& put) {
    Socket sk;
    RETURN_IF_ERROR(sk.Connect().WithContext(what));
    struct nl_msg* msg = nlmsg_alloc_simple(RTM_SETLINK, NLM_F_REQUEST | NLM_F_ACK);
    if (msg == nullptr) return ErrnoToStatus(ENOMEM, what);
    int r = AppendPfName(msg, pf);
    if (r >= 0) r = put(msg);
    if (r < 0) {
      nlmsg_free(msg);
      return sk.Fail(r, what);
    }
    r = nl_send_sync(sk.get(), msg);  // frees msg, waits for the ACK
    if (r < 0) return sk.Fail(r, what);
    return OkStatus();
  }

  // One RTM_SETLINK on the PF carrying one VF attribute.
  Status Change(const std::string& pf, int vf, const std::string& what_set,
                const std::function<void(struct rtnl_link_vf*)>& set) {
    const std::string what =
        "netlink: ip link set " + pf + " vf " + std::to_string(vf) + " " + what_set;
    Socket sk;
    RETURN_IF_ERROR(sk.Connect().WithContext(what));
    struct rtnl_link* orig = nullptr;
    int r = rtnl_link_get_kernel(sk.get(), 0, pf.c_str(), &orig);
    if (r < 0) return sk.Fail(r, what + " <- get " + pf);
    struct rtnl_link* change = rtnl_link_alloc();
    struct rtnl_link_vf* v = rtnl_link_vf_alloc();
    Status s;
    if (change == nullptr || v == nullptr) {
      s = ErrnoToStatus(ENOMEM, what);
    } else {
      rtnl_link_vf_set_index(v, static_cast<uint32_t>(vf));
      set(v);
      r = rtnl_link_vf_add(change, v);
      if (r >= 0) r = rtnl_link_change(sk.get(), orig, change, 0);
      if (r < 0) s = sk.Fail(r, what);
    }
    if (v != nullptr) rtnl_link_vf_put(v);
    if (change != nullptr) rtnl_link_put(change);
    rtnl_link_put(orig);
    return s;
  }
};

}  // namespace

std::vector<VfLinkState> ParseVfInfoList(struct nlmsghdr* msg) {
  std::vector<VfLinkState> out;
  if (msg->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg))) return out;
  const auto* ifi = static_cast<const struct ifinfomsg*>(nlmsg_data(msg));
  struct nlattr* tb[IFLA_MAX + 1];
  if (nlmsg_parse(msg, sizeof(struct ifinfomsg), tb, IFLA_MAX, nullptr) < 0) return out;
  if (tb[IFLA_VFINFO_LIST] == nullptr) return out;
  struct nlattr* info;
  int rem;
  nla_for_each_nested(info, tb[IFLA_VFINFO_LIST], rem) {
    if (nla_type(info) != IFLA_VF_INFO) continue;
    struct nlattr* vf[IFLA_VF_MAX + 1];
    if (nla_parse_nested(vf, IFLA_VF_MAX, info, nullptr) < 0) continue;
    const auto mac = Payload<struct ifla_vf_mac>(vf[IFLA_VF_MAC]);
    if (!mac) continue;  // every VF entry carries its index here
    VfLinkState s;
    s.vf = static_cast<int>(mac->vf);
    // An IB PF's VFs carry a 20-byte hardware address here; theirs are GUIDs.
    if (ifi->ifi_type != ARPHRD_INFINIBAND) s.mac = FormatMacAddress(mac->mac);
    if (const auto t = Payload<struct ifla_vf_trust>(vf[IFLA_VF_TRUST])) s.trust = t->setting != 0;
    if (const auto sc = Payload<struct ifla_vf_spoofchk>(vf[IFLA_VF_SPOOFCHK])) {
      s.spoof_chk = sc->setting != 0;
    }
    if (const auto g = Payload<struct ifla_vf_guid>(vf[IFLA_VF_IB_NODE_GUID]))
      s.node_guid = g->guid;
    if (const auto g = Payload<struct ifla_vf_guid>(vf[IFLA_VF_IB_PORT_GUID]))
      s.port_guid = g->guid;
    if (const auto l = Payload<struct ifla_vf_link_state>(vf[IFLA_VF_LINK_STATE])) {
      s.link_state = static_cast<int>(l->link_state);
    }
    if (const auto r = Payload<struct ifla_vf_rate>(vf[IFLA_VF_RATE])) {
      s.min_tx_rate = r->min_tx_rate;
      s.max_tx_rate = r->max_tx_rate;
    }
    // The kernel sends both (rtnl_fill_vfinfo); the list has the protocol.
    std::optional<struct ifla_vf_vlan_info> vi;
    if (vf[IFLA_VF_VLAN_LIST] != nullptr) {
      struct nlattr* e;
      int erem;
      nla_for_each_nested(e, vf[IFLA_VF_VLAN_LIST], erem) {
        if (nla_type(e) != IFLA_VF_VLAN_INFO) continue;
        vi = Payload<struct ifla_vf_vlan_info>(e);
        break;
      }
    }
    if (vi) {
      s.vlan = vi->vlan;
      s.vlan_qos = vi->qos;
      s.vlan_proto = ntohs(vi->vlan_proto);
    } else if (const auto v = Payload<struct ifla_vf_vlan>(vf[IFLA_VF_VLAN])) {
      s.vlan = v->vlan;
      s.vlan_qos = v->qos;
      s.vlan_proto = ETH_P_8021Q;
    }
    out.push_back(s);
  }
  return out;
}

std::string VfLinkStateName(int state) {
  switch (state) {
    case IFLA_VF_LINK_STATE_AUTO:
      return "auto";
    case IFLA_VF_LINK_STATE_ENABLE:
      return "enable";
    case IFLA_VF_LINK_STATE_DISABLE:
      return "disable";
    default:
      return "";
  }
}

std::optional<int> ParseVfLinkState(const std::string& name) {
  if (name == "auto") return IFLA_VF_LINK_STATE_AUTO;
  if (name == "enable") return IFLA_VF_LINK_STATE_ENABLE;
  if (name == "disable") return IFLA_VF_LINK_STATE_DISABLE;
  return std::nullopt;
}

std::string VfVlanProtoName(uint16_t proto) {
  if (proto == ETH_P_8021Q) return "802.1Q";
  if (proto == ETH_P_8021AD) return "802.1ad";
  return "";
}

std::optional<uint16_t> ParseVfVlanProto(const std::string& name) {
  if (name == "802.1Q") return ETH_P_8021Q;
  if (name == "802.1ad") return ETH_P_8021AD;
  return std::nullopt;
}

int PutVfVlan(struct nl_msg* msg, int vf, uint32_t vlan, uint32_t qos, uint16_t proto) {
  struct nlattr* list = nla_nest_start(msg, IFLA_VFINFO_LIST);
  if (list == nullptr) return -NLE_NOMEM;
  struct nlattr* info = nla_nest_start(msg, IFLA_VF_INFO);
  if (info == nullptr) return -NLE_NOMEM;
  int r = 0;
  if (proto == ETH_P_8021Q) {
    struct ifla_vf_vlan v;
    std::memset(&v, 0, sizeof v);
    v.vf = static_cast<uint32_t>(vf);
    v.vlan = vlan;
    v.qos = qos;
    r = nla_put(msg, IFLA_VF_VLAN, sizeof v, &v);
  } else {
    struct nlattr* vlans = nla_nest_start(msg, IFLA_VF_VLAN_LIST);
    if (vlans == nullptr) return -NLE_NOMEM;
    struct ifla_vf_vlan_info v;
    std::memset(&v, 0, sizeof v);
    v.vf = static_cast<uint32_t>(vf);
    v.vlan = vlan;
    v.qos = qos;
    v.vlan_proto = htons(proto);
    r = nla_put(msg, IFLA_VF_VLAN_INFO, sizeof v, &v);
    if (r >= 0) nla_nest_end(msg, vlans);
  }
  if (r < 0) return r;
  nla_nest_end(msg, info);
  nla_nest_end(msg, list);
  return 0;
}

int PutVfMac(struct nl_msg* msg, int vf, const std::array<uint8_t, 6>& mac) {
  struct nlattr* list = nla_nest_start(msg, IFLA_VFINFO_LIST);
  if (list == nullptr) return -NLE_NOMEM;
  struct nlattr* info = nla_nest_start(msg, IFLA_VF_INFO);
  if (info == nullptr) return -NLE_NOMEM;
  struct ifla_vf_mac v;
  std::memset(&v, 0, sizeof v);
  v.vf = static_cast<uint32_t>(vf);
  std::memcpy(v.mac, mac.data(), mac.size());
  const int r = nla_put(msg, IFLA_VF_MAC, sizeof v, &v);
  if (r < 0) return r;
  nla_nest_end(msg, info);
  nla_nest_end(msg, list);
  return 0;
}

std::unique_ptr<VfNetlink> NewLibnlVfNetlink() { return std::make_unique<LibnlVfNetlink>(); }

}  // namespace provisioner
