// Rail networking facts (railnet module): the addresses, IPv4 conf sysctls,
// policy-routing tables and rules of the Ethernet netdevs that carry rails,
// the files that persist them, and (for doctor) where the kernel routes each
// rail's peer from the rail's own address.
#ifndef PROVISIONER_ENGINE_MODEL_RAILNET_FACTS_H_
#define PROVISIONER_ENGINE_MODEL_RAILNET_FACTS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace provisioner {

struct RailnetFacts {
  bool discovered = false;  // the railnet module ran
  // Global addresses by netdev ("172.16.1.7/24"), of the PF netdevs read.
  std::map<std::string, std::vector<std::string>> addresses;
  // /proc/sys/net/ipv4/conf/<netdev>/<key> as read, by netdev then key.
  std::map<std::string, std::map<std::string, long long>> sysctls;
  // Routes of the tables read, by table number, in the text the plan and
  // the tree capture use: "172.16.1.0/24 dev rail1 scope link src
  // 172.16.1.7", "default via 172.16.1.254 dev rail1".
  std::map<long long, std::vector<std::string>> routes;
  // IPv4 FIB rules other than the kernel's three defaults:
  // "pref 1000 from 172.16.1.7 lookup 101".
  std::vector<std::string> rules;
  bool rules_read = false;
  // /etc/iproute2/rt_tables.d/provisioner-rails.conf and
  // /etc/sysctl.d/90-provisioner-rails.conf (nullopt: absent).
  std::optional<std::string> rt_tables_file;
  std::optional<std::string> sysctl_file;
  // The network stacks configured on the root (issue 39 item 4, detection):
  // "netplan", "systemd-networkd", "NetworkManager", "ifupdown".
  std::vector<std::string> network_stacks;
  // NIC netdevs a stack's configuration names: netdev -> "netplan
  // (/etc/netplan/50-cloud-init.yaml)".
  std::map<std::string, std::string> configured_by;
  // The stacks' files that name a NIC netdev and are not ours, by host path:
  // their text (a rail they configure is a plan error unless it is ours).
  std::map<std::string, std::string> foreign_configs;
  // Our own persistence files in the stacks' directories (a "provisioner"
  // name and our header; modules/railnet/persist_planner.h), by host path.
  std::map<std::string, std::string> persist_files;
  // /etc/network/interfaces has a `source` or `source-directory` line for
  // interfaces.d (where the ifupdown persistence goes).
  bool ifupdown_sources_dir = false;
  // Doctor: "<peer> from <address>" -> the netdev the kernel's route lookup
  // (RTM_GETROUTE) leaves by ("" when there is no route), or the error.
  std::map<std::string, std::string> lookups;
};

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODEL_RAILNET_FACTS_H_
