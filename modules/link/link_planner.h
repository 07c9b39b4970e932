// The link planner: PF mtu and admin state, and the admin state of the VFs of
// netdevice NICs. Pure: a function of the desired state and the facts
// (HostFacts::links, filled by the link module).
//
//   link/<PF netdev>/mtu    before 1500   after 9000
//   link/<PF netdev>/up     before false  after true
//   link/<PF BDF>/vfsUp     before false | null (VFs not there yet)  after true
//
// A PF is brought up when its nic sets mtu, numVfs > 0 or deviceType
// netdevice (a NIC being configured for traffic, as sriov-network-operator
// does with the PFs it configures). The VFs' netdevs may appear only when
// numVfs is applied, so vfsUp is planned per PF from the desired state and
// apply resolves the VF netdevs then (the PF's virtfnN/net); the convergence
// re-plan catches any VF left down.
#ifndef PROVISIONER_MODULES_LINK_LINK_PLANNER_H_
#define PROVISIONER_MODULES_LINK_LINK_PLANNER_H_

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/plan/change.h"

namespace provisioner {

inline constexpr char kLinkModule[] = "link";
inline constexpr char kMtuAttribute[] = "mtu";
inline constexpr char kUpAttribute[] = "up";
inline constexpr char kVfsUpAttribute[] = "vfsUp";
// The smallest MTU of IPv4 (RFC 791), the kernel's ETH_MIN_MTU.
inline constexpr int kMinMtu = 68;

void PlanLinks(const DesiredState& desired, const HostFacts& facts, PlanSink& sink);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_LINK_LINK_PLANNER_H_
