// The railnet planner: nics[].addresses, nics[].routing and nics[].sysctl on
// the selected PF's Ethernet netdev. Pure: a function of the desired state
// and the facts (HostFacts::railnet). One change per difference, in the
// order apply runs them (phase kPhaseRails, after links and RoCE QoS):
//
//   railnet/<netdev>/addresses  [] -> ["172.16.1.7/24"]   (the whole set)
//   railnet/<netdev>/sysctl     {arp_ignore: 0, ...} -> {arp_ignore: 1, ...}
//   railnet/rt_tables/file      /etc/iproute2/rt_tables.d/provisioner-rails.conf
//   railnet/table101/routes     [] -> ["172.16.1.0/24 dev rail1 scope link src 172.16.1.7",
//                                      "default via 172.16.1.254 dev rail1", ...]
//   railnet/table101/rules      [] -> ["pref 1000 from 172.16.1.7 lookup 101"]
//   railnet/sysctl.d/file       /etc/sysctl.d/90-provisioner-rails.conf
//
// A nic's table: routing.table, or 100 + the rail number for a nic of
// spec.rails with addresses; named routing.tableName or the nic's name. The
// table is ours whole (routes not wanted are removed), as are the rules that
// look it up. Sysctl defaults (kRailSysctlDefaults) apply to every nic with
// addresses when two or more nics have addresses; nics[].sysctl overrides and
// adds keys. The persisted sysctls are keyed by the netdev's lasting name
// (names.netdev when given: the names module renames last).
//
// The VF netdevs of a nic's host-network VF groups (vfGroups[].addresses)
// are wanted after their nic's PF netdev, each with a table of its own
// (railnet_vf.h); one that does not exist yet is named "<PF BDF>#vf<n>".
// The module's files are removed, our own only, when no rail wants them.
#ifndef PROVISIONER_MODULES_RAILNET_RAILNET_PLANNER_H_
#define PROVISIONER_MODULES_RAILNET_RAILNET_PLANNER_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/plan/change.h"

namespace provisioner {

inline constexpr char kRailnetModule[] = "railnet";
inline constexpr char kRailAddresses[] = "addresses";
inline constexpr char kRailSysctl[] = "sysctl";
inline constexpr char kRailRoutes[] = "routes";
inline constexpr char kRailRules[] = "rules";
inline constexpr char kRailFile[] = "file";
inline constexpr const char* kRtTablesFile = "/etc/iproute2/rt_tables.d/provisioner-rails.conf";
inline constexpr const char* kRailSysctlFile = "/etc/sysctl.d/90-provisioner-rails.conf";
inline constexpr int kDefaultRulePriority = 1000;
inline constexpr long long kDefaultRailTableBase = 100;

// arp_ignore 1: answer ARP only for an address of the receiving netdev;
// arp_announce 2: ARP requests carry the best local address of the outgoing
// netdev; rp_filter 2: loose reverse-path check (a reply that comes in on
// another rail than the route back is not dropped).
const std::map<std::string, long long>& RailSysctlDefaults();

// One nic's wanted state on its PF netdev.
struct RailWant {
  std::string nic;
  std::string path;         // "spec.nics[3]"
  std::string pf;           // PCI address
  std::string netdev;       // its current name
  std::string lasting_name; // names.netdev, else netdev
  std::optional<std::vector<std::string>> addresses;  // canonical
  std::optional<long long> table;
  std::string table_name;
  std::vector<std::string> routes;  // FormatRoute, in the order to add them
  std::vector<std::string> rules;   // FormatRule
  std::map<std::string, long long> sysctl;
  std::string peer;    // doctor: a neighbour in the first IPv4 address's subnet
  std::string source;  // doctor: the address the peer is looked up from
};

// The wanted state of every nic that asks railnet for something and selects
// a PF with a netdev; problems go to `sink` when given.
std::vector<RailWant> WantedRails(const DesiredState& desired, const HostFacts& facts,
                                  PlanSink* sink);
bool WantsRailnet(const DesiredState& desired);
void PlanRailnet(const DesiredState& desired, const HostFacts& facts, PlanSink& sink);

// The files' text for `rails`.
std::string RenderRtTables(const std::vector<RailWant>& rails);
std::string RenderSysctlConf(const std::vector<RailWant>& rails);
// A first host of `cidr`'s subnet other than its own address: a neighbour.
std::string NeighbourOf(const std::string& cidr);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_RAILNET_RAILNET_PLANNER_H_
