// The ipoib planner: nics[].ipoib on the selected PF's IPoIB netdev. Pure: a
// function of the desired state and the facts (HostFacts::ipoib). One change
// per difference, in the order apply runs them:
//
//   ipoib/<PF netdev>/mode        "datagram" -> "connected"
//   ipoib/<child>/child           false -> true  (create_child, e.g. ibs5f0.8001)
//   ipoib/<child>/mode            null (created by this plan) | "datagram" -> ...
//   ipoib/<if>/mtu                2044 -> 4092   (PF netdev and children)
//   ipoib/<PF netdev>/addresses   [] -> ["172.16.0.10/16"]
//   ipoib/<if>/up                 false -> true  (PF netdev and children)
//
// The mode comes first: the kernel resets the MTU when the mode changes
// (connected: 65520, datagram: at most the broadcast group's), so an MTU is
// planned after any mode change even when it reads as desired now. Children
// of pkeys not listed are left alone (unmanaged), as are addresses of the
// children; link-local IPv6 addresses are the kernel's.
#ifndef PROVISIONER_MODULES_IPOIB_IPOIB_PLANNER_H_
#define PROVISIONER_MODULES_IPOIB_IPOIB_PLANNER_H_

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/plan/change.h"

namespace provisioner {

inline constexpr char kIpoibModule[] = "ipoib";
inline constexpr char kIpoibMode[] = "mode";
inline constexpr char kIpoibChild[] = "child";
inline constexpr char kIpoibMtu[] = "mtu";
inline constexpr char kIpoibAddresses[] = "addresses";
inline constexpr char kIpoibUp[] = "up";

bool WantsIpoib(const DesiredState& desired);
void PlanIpoib(const DesiredState& desired, const HostFacts& facts, PlanSink& sink);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_IPOIB_IPOIB_PLANNER_H_
