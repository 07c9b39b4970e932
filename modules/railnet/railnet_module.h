// Module "railnet": rails that carry traffic on the host network. On the PF
// Ethernet netdev of each nic that asks (railnet_planner.h): its addresses
// (the shared NetdevAddressBackend, capture run/provisioner/rail-addresses), its IPv4
// conf sysctls (/proc/sys/net/ipv4/conf/<netdev>/, persisted in
// /etc/sysctl.d/90-provisioner-rails.conf), a routing table with its routes
// and the rules that look it up (policy_routing.h: rtnetlink, or the
// run/provisioner/routes and rules captures), the table names in
// /etc/iproute2/rt_tables.d/provisioner-rails.conf. Doctor checks in
// railnet_checks.h. Registered after link, roce and rdma. The VF netdevs of
// host-network VF groups likewise, their references resolved at apply and
// verify (railnet_vf_apply.h).
#ifndef PROVISIONER_MODULES_RAILNET_RAILNET_MODULE_H_
#define PROVISIONER_MODULES_RAILNET_RAILNET_MODULE_H_

#include <functional>
#include <memory>
#include <string_view>

#include "engine/module/module.h"
#include "modules/link/address_backend.h"
#include "modules/railnet/policy_routing.h"

namespace provisioner {

struct RailnetModuleOptions {
  // Backends for a root; the factories' choice unless a test says otherwise.
  std::function<std::unique_ptr<NetdevAddressBackend>(HostFs&)> addresses;
  std::function<std::unique_ptr<PolicyRoutingBackend>(HostFs&)> routing;
};

class RailnetModule final : public ModuleWithOptions<RailnetModuleOptions> {
 public:
  using ModuleWithOptions::ModuleWithOptions;

  std::string_view name() const override { return "railnet"; }
  PROVISIONER_MODULE_OVERRIDES(Discover, Plan, Apply, CheckChange, Check, RenderFactsJson,
                               RenderFactsTable);

 private:
  std::unique_ptr<NetdevAddressBackend> Addresses(HostFs& fs) const;
  std::unique_ptr<PolicyRoutingBackend> Routing(HostFs& fs) const;
};

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_RAILNET_RAILNET_MODULE_H_
