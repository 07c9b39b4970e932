#include "test/support/netns.h"

#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/link/macvlan.h>
#include <netlink/route/link/veth.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace provisioner::testing {

std::string EnterTestNetns(bool with_macvlan) {
  if (::unshare(CLONE_NEWNET) != 0) {
    return std::string("unshare(CLONE_NEWNET): ") + std::strerror(errno);
  }
  nl_sock* sk = nl_socket_alloc();
  if (sk == nullptr) return "nl_socket_alloc failed";
  int r = nl_connect(sk, NETLINK_ROUTE);
  if (r == 0) r = rtnl_link_veth_add(sk, "veth-a", "veth-b", ::getpid());
  std::string why = r == 0 ? "" : std::string("veth: ") + nl_geterror(r);
  if (r == 0 && with_macvlan) {
    rtnl_link* mv = rtnl_link_macvlan_alloc();
    rtnl_link_set_name(mv, "mv0");
    rtnl_link_set_link(mv, static_cast<int>(::if_nametoindex("veth-a")));
    r = rtnl_link_add(sk, mv, NLM_F_CREATE | NLM_F_EXCL);
    rtnl_link_put(mv);
    if (r != 0) why = std::string("macvlan: ") + nl_geterror(r);
  }
  nl_socket_free(sk);
  return why;
}

}  // namespace provisioner::testing
