#include "engine/netlink/rtnl_link.h"

#include <netlink/netlink.h>
#include <netlink/route/link.h>

#include <cerrno>

#include "engine/netlink/netlink_socket.h"

namespace provisioner {

void RtnlLinkDeleter::operator()(rtnl_link* l) const { rtnl_link_put(l); }

StatusOr<RtnlLinkPtr> GetRtnlLink(nl_sock* sk, const std::string& ifname) {
  rtnl_link* raw = nullptr;
  if (int r = rtnl_link_get_kernel(sk, 0, ifname.c_str(), &raw); r < 0) {
    Status s = NlError(r, "netlink RTM_GETLINK " + ifname);
    if (s.err() == ENODEV) return Status(StatusCode::kNotFound, s.message(), ENODEV);
    return s;
  }
  return RtnlLinkPtr(raw);
}

Status ChangeRtnlLink(nl_sock* sk, rtnl_link* orig, const std::string& ifname,
                      const std::string& what, const std::function<void(rtnl_link*)>& fill) {
  RtnlLinkPtr change(rtnl_link_alloc());
  if (!change) return InternalError("netlink: rtnl_link_alloc failed");
  fill(change.get());
  if (int r = rtnl_link_change(sk, orig, change.get(), 0); r < 0) {
    return NlError(r, "netlink RTM_SETLINK " + ifname + " " + what);
  }
  return OkStatus();
}

}  // namespace provisioner
