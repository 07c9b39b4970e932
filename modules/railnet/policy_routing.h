// Policy routing of the rails: routes of a routing table, FIB rules, and the
// route lookup doctor asks for. One interface, two backends, chosen once per
// root by NewPolicyRoutingBackend:
// - live: rtnetlink (libnl-route-3): RTM_GETROUTE/NEWROUTE/DELROUTE with
//   RTA_TABLE (rtnl_route), RTM_GETRULE/NEWRULE/DELRULE (rtnl_rule: FRA_SRC,
//   FRA_TABLE, FRA_PRIORITY, action FR_ACT_TO_TBL as linux/fib_rules.h has
//   them), and RTM_GETROUTE with RTA_DST and RTA_SRC for a lookup, the
//   message `ip route get <dst> from <src>` sends (iproute2 ip/iproute.c);
//   nothing leaves the host. What it read goes to `snapshot` as the two
//   capture files below.
// - tree: those capture files: kRouteCapture "table <n> <route>" per line,
//   kRuleCapture one rule per line; a lookup is computed from them, with the
//   main table's connected routes from the address capture.
// Routes and rules are text in one canonical form (FormatRoute, FormatRule),
// the one plans, discover and the captures show. IPv4 only.
#ifndef PROVISIONER_MODULES_RAILNET_POLICY_ROUTING_H_
#define PROVISIONER_MODULES_RAILNET_POLICY_ROUTING_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"

namespace provisioner {

inline constexpr const char* kRailAddressCapture = "/run/provisioner/rail-addresses";
inline constexpr const char* kRouteCapture = "/run/provisioner/routes";
inline constexpr const char* kRuleCapture = "/run/provisioner/rules";
inline constexpr long long kMainTable = 254;  // RT_TABLE_MAIN

// "172.16.1.0/24 dev rail1 scope link src 172.16.1.7",
// "default via 172.16.1.254 dev rail1", "10.0.0.0/8 via 172.16.1.254 dev rail1".
struct PolicyRoute {
  std::string dst;  // canonical CIDR; "default" for 0.0.0.0/0
  std::string via;  // "" none
  std::string dev;
  std::string src;  // "" none
  bool link_scope = false;
};
std::string FormatRoute(const PolicyRoute& r);
std::optional<PolicyRoute> ParseRoute(const std::string& text);

// "pref 1000 from 172.16.1.7 lookup 101" (from: an address, a CIDR, or "all").
struct PolicyRule {
  long long pref = 0;
  std::string from = "all";
  long long table = 0;
};
std::string FormatRule(const PolicyRule& r);
std::optional<PolicyRule> ParseRule(const std::string& text);

// The netdev a packet to `dst` from `src` leaves by, as the kernel's FIB
// would pick it: rules by pref (plus main's at 32766), the first whose
// `from` holds src and whose table has a route for dst (longest prefix).
// "" when none.
std::string ComputeLookup(const std::vector<PolicyRule>& rules,
                          const std::map<long long, std::vector<PolicyRoute>>& tables,
                          const std::string& dst, const std::string& src);

class PolicyRoutingBackend {
 public:
  virtual ~PolicyRoutingBackend() = default;
  virtual std::string Name() const = 0;  // "netlink" | "tree"
  // The unicast routes of `table`, formatted, sorted.
  virtual StatusOr<std::vector<std::string>> Routes(long long table) = 0;
  virtual Status AddRoute(long long table, const std::string& route) = 0;
  virtual Status RemoveRoute(long long table, const std::string& route) = 0;
  // IPv4 rules but the kernel's defaults (0 local, 32766 main, 32767
  // default), formatted, by pref.
  virtual StatusOr<std::vector<std::string>> Rules() = 0;
  virtual Status AddRule(const std::string& rule) = 0;
  virtual Status RemoveRule(const std::string& rule) = 0;
  // The netdev `dst` is routed by from the local address `src` ("" none).
  virtual StatusOr<std::string> Lookup(const std::string& dst, const std::string& src) = 0;
};

std::unique_ptr<PolicyRoutingBackend> NewNetlinkPolicyRoutingBackend(const HostFs* notes = nullptr);
std::unique_ptr<PolicyRoutingBackend> NewTreePolicyRoutingBackend(HostFs& fs);
std::unique_ptr<PolicyRoutingBackend> NewPolicyRoutingBackend(HostFs& fs);

// The capture files' text and back.
std::string RenderRouteCapture(const std::map<long long, std::vector<std::string>>& by_table);
std::map<long long, std::vector<std::string>> ParseRouteCapture(const std::string& text);

// Makes `want` the whole set: removes what it lacks, adds what is missing
// (in want's order: a subnet route before the routes via its gateway).
Status SetTableRoutes(PolicyRoutingBackend& b, long long table, const std::vector<std::string>& want);
// The same for the rules that look up `table`.
Status SetTableRules(PolicyRoutingBackend& b, long long table, const std::vector<std::string>& want);
// The rules of `all` that look up `table`.
std::vector<std::string> RulesOfTable(const std::vector<std::string>& all, long long table);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_RAILNET_POLICY_ROUTING_H_
