// The rtnetlink backend of link_backend.h (libnl-route-3). The only code of
// the link module that includes libnl headers.
#include <linux/if_link.h>
#include <net/if.h>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/rtnl.h>
#include <netlink/socket.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>

#include "engine/netlink/netlink_socket.h"
#include "engine/netlink/rtnl_link.h"
#include "modules/link/link_backend.h"

namespace provisioner {
namespace {

using SockPtr = NlSocket;
using MsgPtr = NlMsg;

StatusOr<SockPtr> Connect() { return ConnectNetlink(NETLINK_ROUTE, "NETLINK_ROUTE"); }

struct MtuRange {
  std::optional<int> min, max;
  bool seen = false;
};

int OnLink(nl_msg* msg, void* arg) {
  auto* range = static_cast<MtuRange*>(arg);
  nlmsghdr* h = nlmsg_hdr(msg);
  if (h->nlmsg_type != RTM_NEWLINK) return NL_OK;
  nlattr* tb[IFLA_MAX + 1] = {};
  if (nlmsg_parse(h, sizeof(ifinfomsg), tb, IFLA_MAX, nullptr) < 0) return NL_OK;
  range->seen = true;
  if (tb[IFLA_MIN_MTU]) range->min = static_cast<int>(nla_get_u32(tb[IFLA_MIN_MTU]));
  if (tb[IFLA_MAX_MTU]) range->max = static_cast<int>(nla_get_u32(tb[IFLA_MAX_MTU]));
  return NL_OK;
}

// IFLA_MIN_MTU / IFLA_MAX_MTU of one link (kernel 4.18+); absent stays nullopt.
MtuRange ReadMtuRange(nl_sock* sk, int ifindex) {
  MtuRange range;
  MsgPtr m(nlmsg_alloc_simple(RTM_GETLINK, NLM_F_REQUEST));
  if (!m) return range;
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = ifindex;
  if (nlmsg_append(m.get(), &ifi, sizeof ifi, NLMSG_ALIGNTO) < 0) return range;
  nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, OnLink, &range);
  if (nl_send_auto(sk, m.get()) < 0) return range;
  nl_recvmsgs_default(sk);
  return range;
}

class Netlink : public LinkBackend {
 public:
  explicit Netlink(const HostFs* notes) : notes_(notes) {}
  std::string Name() const override { return "netlink"; }

  StatusOr<LinkFacts> Read(const std::string& ifname) override {
    if (!IsValidIfname(ifname)) return InvalidArgumentError("bad interface name " + ifname);
    ASSIGN_OR_RETURN(SockPtr sk, Connect());
    ASSIGN_OR_RETURN(RtnlLinkPtr link, GetRtnlLink(sk.get(), ifname));
    LinkFacts f;
    f.name = ifname;
    f.mtu = static_cast<int>(rtnl_link_get_mtu(link.get()));
    f.admin_up = (rtnl_link_get_flags(link.get()) & IFF_UP) != 0;
    char buf[32];
    f.operstate = rtnl_link_operstate2str(rtnl_link_get_operstate(link.get()), buf, sizeof buf);
    MtuRange range = ReadMtuRange(sk.get(), rtnl_link_get_ifindex(link.get()));
    f.min_mtu = range.min;
    f.max_mtu = range.max;
    if (notes_ != nullptr) {
      // What the sysfs backend reads under a tree root: `snapshot` copies it.
      for (const char* attr : {"mtu", "flags", "operstate"}) {
        notes_->NoteExternalRead("/sys/class/net/" + ifname + "/" + attr);
      }
    }
    return f;
  }

  Status SetMtu(const std::string& ifname, int mtu) override {
    if (mtu <= 0) return InvalidArgumentError("mtu must be positive, not " + std::to_string(mtu));
    return Change(ifname, "mtu " + std::to_string(mtu),
                  [mtu](rtnl_link* c) { rtnl_link_set_mtu(c, static_cast<unsigned>(mtu)); });
  }

  Status SetUp(const std::string& ifname, bool up) override {
    return Change(ifname, up ? "up" : "down", [up](rtnl_link* c) {
      if (up) {
        rtnl_link_set_flags(c, IFF_UP);
      } else {
        rtnl_link_unset_flags(c, IFF_UP);
      }
    });
  }

 private:
  const HostFs* notes_;

  template <typename Fn>
  Status Change(const std::string& ifname, const std::string& what, Fn fill) {
    if (!IsValidIfname(ifname)) return InvalidArgumentError("bad interface name " + ifname);
    ASSIGN_OR_RETURN(SockPtr sk, Connect());
    ASSIGN_OR_RETURN(RtnlLinkPtr orig, GetRtnlLink(sk.get(), ifname));
    return ChangeRtnlLink(sk.get(), orig.get(), ifname, what, fill);
  }
};

}  // namespace

std::unique_ptr<LinkBackend> NewNetlinkLinkBackend(const HostFs* notes) {
  return std::make_unique<Netlink>(notes);
}

}  // namespace provisioner
