// The link planner: PF mtu and admin state, and the admin state of the VFs of
// netdevice NICs. Pure: a function of the desired state and the facts
// (HostFacts::links, filled by the link module).
//
//   link/<PF netdev>/mtu    before 1500   after 9000
//   link/<PF netdev>/up     before false  after true
//   link/<PF BDF>/vfsUp     before false | null (VFs not there yet)  after true
//   link/<PF BDF>/vfsUp#a-b the same for VFs a..b (detail first, last): the
//                           runs of VFs whose deviceType (their vfGroup's,
//                           else the nic's) is netdevice, when not all are
//   link/<PF BDF>/vfMtu     before [mtu per VF | null] | null (VFs made by
//                           this plan)  after 9000 (inverse: [mtu per VF])
//
// A PF is brought up when its nic sets mtu, vfMtu, numVfs > 0 or deviceType
// netdevice (its own or a vfGroup's) (a NIC being configured for traffic, as sriov-network-operator
// does with the PFs it configures). The VFs' netdevs may appear only when
// numVfs is applied, so vfsUp is planned per PF from the desired state and
// apply resolves the VF netdevs then (the PF's virtfnN/net); the convergence
// re-plan catches any VF left down.
#ifndef PROVISIONER_MODULES_LINK_LINK_PLANNER_H_
#define PROVISIONER_MODULES_LINK_LINK_PLANNER_H_

#include <optional>
#include <string>

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/plan/change.h"

namespace provisioner {

inline constexpr char kLinkModule[] = "link";
inline constexpr char kMtuAttribute[] = "mtu";
inline constexpr char kUpAttribute[] = "up";
inline constexpr char kVfsUpAttribute[] = "vfsUp";
inline constexpr char kVfMtuAttribute[] = "vfMtu";
// The smallest MTU of IPv4 (RFC 791), the kernel's ETH_MIN_MTU.
inline constexpr int kMinMtu = 68;

void PlanLinks(const DesiredState& desired, const HostFacts& facts, PlanSink& sink);

// VF indexes first..last of one PF, both included: a nic's VFs (0..numVfs-1)
// or a VF group's range.
struct VfIndexRange {
  int first = 0;
  int last = 0;
};

// What a nic, or a VF group of it, asks of its VF netdevs' MTU.
struct VfMtuRequest {
  int mtu = 0;                // vfMtu
  VfIndexRange range;         // the VFs it is for
  int count = 0;              // the PF's VFs after the numVfs phase
  std::optional<int> pf_mtu;  // the nic's mtu (the PF's after this plan); else the current
  std::optional<std::string> device_type;  // the VFs' deviceType (netdevice: rebound if not)
  std::string nic;                         // the nic's name
  std::string field_path;                  // "spec.nics[0].vfMtu" (a group: its own vfMtu path)
};

// Plans the MTU of the netdevs of VFs `range` of `pf` (phase links, after the
// PF's own mtu, so a PF raised in the same plan is raised first): the change
// link/<PF BDF>/vfMtu, or link/<PF BDF>/vfMtu#<first>-<last> for part of the
// VFs. Planned when a VF in the range reads another MTU, has no netdev now,
// or gets a new one before phase links (VFs re-created by numVfs, or rebound
// to their network driver for deviceType netdevice: a new netdev starts at
// 1500, whatever the PF's MTU). Errors (at req.field_path): above the PF's
// MTU after the plan (the nic's mtu, else the PF netdev's now) or above a
// VF's IFLA_MAX_MTU when discovery read it. Config-level checks (vfio-pci,
// above the nic's mtu) are the loader's (engine/config/checks.cc).
void PlanVfMtu(const PciFunction& pf, const VfMtuRequest& req, const HostFacts& facts,
               PlanSink& sink);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_LINK_LINK_PLANNER_H_
