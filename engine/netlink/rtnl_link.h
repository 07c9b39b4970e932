// One rtnetlink link, read and changed through libnl-route-3's rtnl_link:
// the exchange the link module (mtu, up) and the names module (rename) share.
#ifndef PROVISIONER_ENGINE_NETLINK_RTNL_LINK_H_
#define PROVISIONER_ENGINE_NETLINK_RTNL_LINK_H_

#include <functional>
#include <memory>
#include <string>

#include "engine/base/status.h"

struct nl_sock;
struct rtnl_link;

namespace provisioner {

struct RtnlLinkDeleter {
  void operator()(rtnl_link* l) const;
};
using RtnlLinkPtr = std::unique_ptr<rtnl_link, RtnlLinkDeleter>;

// The kernel's link `ifname` (RTM_GETLINK). No such link: kNotFound, errno ENODEV.
StatusOr<RtnlLinkPtr> GetRtnlLink(nl_sock* sk, const std::string& ifname);

// Changes the link `orig` (named `ifname` in errors) by what `fill` sets on an
// empty change object (RTM_SETLINK); `what` names the change ("mtu 9000").
Status ChangeRtnlLink(nl_sock* sk, rtnl_link* orig, const std::string& ifname,
                      const std::string& what, const std::function<void(rtnl_link*)>& fill);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_NETLINK_RTNL_LINK_H_
