// The rtnetlink backend of address_backend.h (libnl-route-3 rtnl_addr).
#include <arpa/inet.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/addr.h>
#include <netlink/cache.h>
#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "engine/netlink/netlink_socket.h"
#include "modules/link/address_backend.h"
#include "modules/link/link_backend.h"

namespace provisioner {
namespace {

struct CacheDeleter {
  void operator()(nl_cache* c) const { nl_cache_free(c); }
};
struct AddrDeleter {
  void operator()(rtnl_addr* a) const { rtnl_addr_put(a); }
};
struct NlAddrDeleter {
  void operator()(nl_addr* a) const { nl_addr_put(a); }
};
using AddrPtr = std::unique_ptr<rtnl_addr, AddrDeleter>;

StatusOr<int> Ifindex(const std::string& ifname) {
  if (!IsValidIfname(ifname)) return InvalidArgumentError("bad interface name " + ifname);
  const unsigned index = ::if_nametoindex(ifname.c_str());
  if (index == 0) {
    return Status(StatusCode::kNotFound, "netlink: no netdev " + ifname + ": ENODEV", ENODEV);
  }
  return static_cast<int>(index);
}

// "172.16.0.10/16" of one kernel address; "" for IPv6 link-local.
std::string Text(rtnl_addr* a) {
  nl_addr* local = rtnl_addr_get_local(a);
  if (local == nullptr) return "";
  const int family = nl_addr_get_family(local);
  char buf[INET6_ADDRSTRLEN] = {};
  if (::inet_ntop(family, nl_addr_get_binary_addr(local), buf, sizeof buf) == nullptr) return "";
  if (family == AF_INET6 && rtnl_addr_get_scope(a) == RT_SCOPE_LINK) return "";
  return std::string(buf) + "/" + std::to_string(rtnl_addr_get_prefixlen(a));
}

class Netlink : public NetdevAddressBackend {
 public:
  Netlink(std::string capture, const HostFs* notes)
      : capture_(std::move(capture)), notes_(notes) {}
  std::string Name() const override { return "netlink"; }

  StatusOr<std::vector<std::string>> Read(const std::string& ifname) override {
    ASSIGN_OR_RETURN(int index, Ifindex(ifname));
    ASSIGN_OR_RETURN(NlSocket sk, ConnectNetlink(NETLINK_ROUTE, "NETLINK_ROUTE"));
    nl_cache* raw = nullptr;
    if (int r = rtnl_addr_alloc_cache(sk.get(), &raw); r < 0) {
      return NlError(r, "netlink RTM_GETADDR");
    }
    std::unique_ptr<nl_cache, CacheDeleter> cache(raw);
    std::vector<std::string> out;
    for (nl_object* o = nl_cache_get_first(cache.get()); o != nullptr; o = nl_cache_get_next(o)) {
      auto* a = reinterpret_cast<rtnl_addr*>(o);
      if (rtnl_addr_get_ifindex(a) != index) continue;
      std::string t = Text(a);
      if (!t.empty()) out.push_back(t);
    }
    std::sort(out.begin(), out.end());
    if (notes_ != nullptr) {
      // What the tree backend reads under a snapshot of this host.
      answered_[ifname] = out;
      notes_->NoteCapture(capture_, RenderAddressCapture(answered_));
    }
    return out;
  }

  Status Add(const std::string& ifname, const std::string& cidr) override {
    return Change(ifname, cidr, true);
  }
  Status Remove(const std::string& ifname, const std::string& cidr) override {
    return Change(ifname, cidr, false);
  }

 private:
  Status Change(const std::string& ifname, const std::string& cidr, bool add) {
    const std::string what =
        std::string("netlink ") + (add ? "RTM_NEWADDR " : "RTM_DELADDR ") + cidr + " on " + ifname;
    ASSIGN_OR_RETURN(int index, Ifindex(ifname));
    if (!CanonicalCidr(cidr)) return InvalidArgumentError(what + ": no address with a prefix");
    nl_addr* parsed = nullptr;
    if (int r = nl_addr_parse(cidr.c_str(), AF_UNSPEC, &parsed); r < 0) return NlError(r, what);
    std::unique_ptr<nl_addr, NlAddrDeleter> local(parsed);
    AddrPtr a(rtnl_addr_alloc());
    if (!a) return InternalError("netlink: rtnl_addr_alloc failed");
    rtnl_addr_set_ifindex(a.get(), index);
    rtnl_addr_set_family(a.get(), nl_addr_get_family(local.get()));
    if (int r = rtnl_addr_set_local(a.get(), local.get()); r < 0) return NlError(r, what);
    rtnl_addr_set_prefixlen(a.get(), static_cast<int>(nl_addr_get_prefixlen(local.get())));
    ASSIGN_OR_RETURN(NlSocket sk, ConnectNetlink(NETLINK_ROUTE, "NETLINK_ROUTE"));
    const int r =
        add ? rtnl_addr_add(sk.get(), a.get(), NLM_F_EXCL) : rtnl_addr_delete(sk.get(), a.get(), 0);
    if (r < 0) return NlError(r, what);
    return OkStatus();
  }

  std::string capture_;
  const HostFs* notes_;
  std::map<std::string, std::vector<std::string>> answered_;
};

}  // namespace

std::unique_ptr<NetdevAddressBackend> NewNetlinkNetdevAddressBackend(const std::string& capture,
                                                         const HostFs* notes) {
  return std::make_unique<Netlink>(capture, notes);
}

}  // namespace provisioner
