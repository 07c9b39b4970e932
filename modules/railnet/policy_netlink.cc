// The rtnetlink backend of policy_routing.h (libnl-route-3 3.7: rtnl_route,
// rtnl_rule; the lookup as a raw RTM_GETROUTE). Checked against the kernel's
// include/uapi/linux/fib_rules.h and rtnetlink.h (v6.6) and iproute2 6.1's
// ip/iprule.c (iprule_modify: FRA_SRC with frh.src_len, FRA_TABLE when the
// table is above 255, frh.action FR_ACT_TO_TBL) and ip/iproute.c
// (iproute_get: RTA_DST, RTA_SRC, rtm_dst_len/src_len 32).
#include <arpa/inet.h>
#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/addr.h>
#include <netlink/cache.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/nexthop.h>
#include <netlink/route/route.h>
#include <netlink/route/rule.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "engine/netlink/netlink_socket.h"
#include "modules/railnet/policy_routing.h"

namespace provisioner {
namespace {

struct CacheDeleter {
  void operator()(nl_cache* c) const { nl_cache_free(c); }
};
struct AddrDeleter {
  void operator()(nl_addr* a) const { nl_addr_put(a); }
};
struct RouteDeleter {
  void operator()(rtnl_route* r) const { rtnl_route_put(r); }
};
struct RuleDeleter {
  void operator()(rtnl_rule* r) const { rtnl_rule_put(r); }
};
struct MsgDeleter {
  void operator()(nl_msg* m) const { nlmsg_free(m); }
};
using CachePtr = std::unique_ptr<nl_cache, CacheDeleter>;
using AddrPtr = std::unique_ptr<nl_addr, AddrDeleter>;

std::string Ip(nl_addr* a) {
  if (a == nullptr || nl_addr_get_family(a) != AF_INET) return "";
  char buf[INET_ADDRSTRLEN] = {};
  if (::inet_ntop(AF_INET, nl_addr_get_binary_addr(a), buf, sizeof buf) == nullptr) return "";
  return buf;
}

std::string IfName(int index) {
  char buf[IF_NAMESIZE] = {};
  if (index <= 0 || ::if_indextoname(static_cast<unsigned>(index), buf) == nullptr) return "";
  return buf;
}

StatusOr<int> IfIndex(const std::string& name, const std::string& what) {
  const unsigned index = ::if_nametoindex(name.c_str());
  if (index == 0) return Status(StatusCode::kNotFound, what + ": no netdev " + name + ": ENODEV", ENODEV);
  return static_cast<int>(index);
}

StatusOr<AddrPtr> Parse(const std::string& text, const std::string& what) {
  nl_addr* a = nullptr;
  if (int r = nl_addr_parse(text.c_str(), AF_INET, &a); r < 0) return NlError(r, what + ": " + text);
  return AddrPtr(a);
}

class Netlink : public PolicyRoutingBackend {
 public:
  explicit Netlink(const HostFs* notes) : notes_(notes) {}
  std::string Name() const override { return "netlink"; }

  StatusOr<std::vector<std::string>> Routes(long long table) override {
    ASSIGN_OR_RETURN(NlSocket sk, ConnectNetlink(NETLINK_ROUTE, "NETLINK_ROUTE"));
    nl_cache* raw = nullptr;
    if (int r = rtnl_route_alloc_cache(sk.get(), AF_INET, 0, &raw); r < 0) {
      return NlError(r, "netlink RTM_GETROUTE");
    }
    CachePtr cache(raw);
    std::vector<std::string> out;
    for (nl_object* o = nl_cache_get_first(cache.get()); o != nullptr; o = nl_cache_get_next(o)) {
      auto* rt = reinterpret_cast<rtnl_route*>(o);
      if (rtnl_route_get_table(rt) != table || rtnl_route_get_type(rt) != RTN_UNICAST) continue;
      PolicyRoute p;
      nl_addr* dst = rtnl_route_get_dst(rt);
      const unsigned len = dst != nullptr ? nl_addr_get_prefixlen(dst) : 0;
      p.dst = len == 0 ? "default" : Ip(dst) + "/" + std::to_string(len);
      rtnl_nexthop* nh = rtnl_route_nexthop_n(rt, 0);
      if (nh == nullptr) continue;
      p.via = Ip(rtnl_route_nh_get_gateway(nh));
      p.dev = IfName(rtnl_route_nh_get_ifindex(nh));
      p.src = Ip(rtnl_route_get_pref_src(rt));
      p.link_scope = rtnl_route_get_scope(rt) == RT_SCOPE_LINK;
      if (p.dev.empty()) continue;
      out.push_back(FormatRoute(p));
    }
    std::sort(out.begin(), out.end());
    if (notes_ != nullptr) {
      routes_[table] = out;
      notes_->NoteCapture(kRouteCapture, RenderRouteCapture(routes_));
    }
    return out;
  }

  Status AddRoute(long long table, const std::string& route) override {
    return ChangeRoute(table, route, true);
  }
  Status RemoveRoute(long long table, const std::string& route) override {
    return ChangeRoute(table, route, false);
  }

  StatusOr<std::vector<std::string>> Rules() override {
    ASSIGN_OR_RETURN(NlSocket sk, ConnectNetlink(NETLINK_ROUTE, "NETLINK_ROUTE"));
    nl_cache* raw = nullptr;
    if (int r = rtnl_rule_alloc_cache(sk.get(), AF_INET, &raw); r < 0) {
      return NlError(r, "netlink RTM_GETRULE");
    }
    CachePtr cache(raw);
    std::vector<PolicyRule> rules;
    for (nl_object* o = nl_cache_get_first(cache.get()); o != nullptr; o = nl_cache_get_next(o)) {
      auto* r = reinterpret_cast<rtnl_rule*>(o);
      if (rtnl_rule_get_action(r) != FR_ACT_TO_TBL) continue;
      PolicyRule p;
      p.pref = rtnl_rule_get_prio(r);
      p.table = rtnl_rule_get_table(r);
      nl_addr* src = rtnl_rule_get_src(r);
      if (src != nullptr && nl_addr_get_prefixlen(src) > 0) {
        const unsigned len = nl_addr_get_prefixlen(src);
        p.from = Ip(src) + (len == 32 ? "" : "/" + std::to_string(len));
      }
      // The kernel's local, main and default rules (fib_default_rules_init).
      const bool kernel_default = p.from == "all" &&
                                  (p.pref == 0 || p.pref == 32766 || p.pref == 32767) &&
                                  p.table >= 253 && p.table <= 255;
      if (!kernel_default) rules.push_back(p);
    }
    std::stable_sort(rules.begin(), rules.end(),
                     [](const PolicyRule& a, const PolicyRule& b) { return a.pref < b.pref; });
    std::vector<std::string> out;
    std::string capture;
    for (const PolicyRule& p : rules) {
      out.push_back(FormatRule(p));
      capture += out.back() + "\n";
    }
    if (notes_ != nullptr) notes_->NoteCapture(kRuleCapture, capture);
    return out;
  }

  Status AddRule(const std::string& rule) override { return ChangeRule(rule, true); }
  Status RemoveRule(const std::string& rule) override { return ChangeRule(rule, false); }

  StatusOr<std::string> Lookup(const std::string& dst, const std::string& src) override {
    const std::string what = "netlink RTM_GETROUTE " + dst + " from " + src;
    in_addr d{}, s{};
    if (::inet_pton(AF_INET, dst.c_str(), &d) != 1 || ::inet_pton(AF_INET, src.c_str(), &s) != 1) {
      return InvalidArgumentError(what + ": no IPv4 addresses");
    }
    ASSIGN_OR_RETURN(NlSocket sk, ConnectNetlink(NETLINK_ROUTE, "NETLINK_ROUTE"));
    std::unique_ptr<nl_msg, MsgDeleter> msg(nlmsg_alloc_simple(RTM_GETROUTE, NLM_F_REQUEST));
    if (!msg) return InternalError(what + ": nlmsg_alloc failed");
    rtmsg rtm{};
    rtm.rtm_family = AF_INET;
    rtm.rtm_dst_len = 32;
    rtm.rtm_src_len = 32;
    if (nlmsg_append(msg.get(), &rtm, sizeof rtm, NLMSG_ALIGNTO) < 0 ||
        nla_put(msg.get(), RTA_DST, sizeof d, &d) < 0 ||
        nla_put(msg.get(), RTA_SRC, sizeof s, &s) < 0) {
      return InternalError(what + ": message too long");
    }
    if (int r = nl_send_auto(sk.get(), msg.get()); r < 0) return NlError(r, what);
    struct Answer {
      int oif = 0;
    } answer;
    auto on_valid = [](nl_msg* m, void* arg) -> int {
      nlattr* tb[RTA_MAX + 1] = {};
      if (nlmsg_parse(nlmsg_hdr(m), sizeof(rtmsg), tb, RTA_MAX, nullptr) == 0 &&
          tb[RTA_OIF] != nullptr) {
        static_cast<Answer*>(arg)->oif = static_cast<int>(nla_get_u32(tb[RTA_OIF]));
      }
      return NL_OK;
    };
    nl_socket_modify_cb(sk.get(), NL_CB_VALID, NL_CB_CUSTOM, on_valid, &answer);
    const int r = nl_recvmsgs_default(sk.get());
    if (r == -NLE_NOADDR || r == -NLE_INVAL || r == -NLE_AF_NOSUPPORT) return std::string();
    if (r < 0) {
      // ENETUNREACH (no route) comes back as an error answer.
      if (nl_syserr2nlerr(ENETUNREACH) == -r || nl_syserr2nlerr(EHOSTUNREACH) == -r) {
        return std::string();
      }
      return NlError(r, what);
    }
    return IfName(answer.oif);
  }

 private:
  Status ChangeRoute(long long table, const std::string& text, bool add) {
    const std::string what = std::string("netlink ") + (add ? "RTM_NEWROUTE " : "RTM_DELROUTE ") +
                             text + " table " + std::to_string(table);
    auto p = ParseRoute(text);
    if (!p) return InvalidArgumentError(what + ": no route");
    ASSIGN_OR_RETURN(int index, IfIndex(p->dev, what));
    std::unique_ptr<rtnl_route, RouteDeleter> rt(rtnl_route_alloc());
    if (!rt) return InternalError(what + ": rtnl_route_alloc failed");
    rtnl_route_set_family(rt.get(), AF_INET);
    rtnl_route_set_table(rt.get(), static_cast<uint32_t>(table));
    rtnl_route_set_type(rt.get(), RTN_UNICAST);
    rtnl_route_set_scope(rt.get(), p->link_scope ? RT_SCOPE_LINK : RT_SCOPE_UNIVERSE);
    ASSIGN_OR_RETURN(AddrPtr dst, Parse(p->dst == "default" ? "0.0.0.0/0" : p->dst, what));
    if (int r = rtnl_route_set_dst(rt.get(), dst.get()); r < 0) return NlError(r, what);
    if (!p->src.empty()) {
      ASSIGN_OR_RETURN(AddrPtr src, Parse(p->src, what));
      if (int r = rtnl_route_set_pref_src(rt.get(), src.get()); r < 0) return NlError(r, what);
    }
    rtnl_nexthop* nh = rtnl_route_nh_alloc();  // owned by the route once added
    if (nh == nullptr) return InternalError(what + ": rtnl_route_nh_alloc failed");
    rtnl_route_nh_set_ifindex(nh, index);
    if (!p->via.empty()) {
      ASSIGN_OR_RETURN(AddrPtr via, Parse(p->via, what));
      rtnl_route_nh_set_gateway(nh, via.get());
    }
    rtnl_route_add_nexthop(rt.get(), nh);
    ASSIGN_OR_RETURN(NlSocket sk, ConnectNetlink(NETLINK_ROUTE, "NETLINK_ROUTE"));
    const int r = add ? rtnl_route_add(sk.get(), rt.get(), NLM_F_EXCL)
                      : rtnl_route_delete(sk.get(), rt.get(), 0);
    if (r < 0) return NlError(r, what);
    return OkStatus();
  }

  Status ChangeRule(const std::string& text, bool add) {
    const std::string what =
        std::string("netlink ") + (add ? "RTM_NEWRULE " : "RTM_DELRULE ") + text;
    auto p = ParseRule(text);
    if (!p) return InvalidArgumentError(what + ": no rule");
    std::unique_ptr<rtnl_rule, RuleDeleter> rule(rtnl_rule_alloc());
    if (!rule) return InternalError(what + ": rtnl_rule_alloc failed");
    rtnl_rule_set_family(rule.get(), AF_INET);
    rtnl_rule_set_prio(rule.get(), static_cast<uint32_t>(p->pref));
    rtnl_rule_set_table(rule.get(), static_cast<uint32_t>(p->table));
    rtnl_rule_set_action(rule.get(), FR_ACT_TO_TBL);
    if (p->from != "all") {
      ASSIGN_OR_RETURN(AddrPtr src, Parse(p->from, what));
      if (int r = rtnl_rule_set_src(rule.get(), src.get()); r < 0) return NlError(r, what);
    }
    ASSIGN_OR_RETURN(NlSocket sk, ConnectNetlink(NETLINK_ROUTE, "NETLINK_ROUTE"));
    const int r = add ? rtnl_rule_add(sk.get(), rule.get(), NLM_F_EXCL)
                      : rtnl_rule_delete(sk.get(), rule.get(), 0);
    if (r < 0) return NlError(r, what);
    return OkStatus();
  }

  const HostFs* notes_;
  std::map<long long, std::vector<std::string>> routes_;
};

}  // namespace

std::unique_ptr<PolicyRoutingBackend> NewNetlinkPolicyRoutingBackend(const HostFs* notes) {
  return std::make_unique<Netlink>(notes);
}

}  // namespace provisioner
