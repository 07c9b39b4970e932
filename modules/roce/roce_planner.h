// Pure planning of the roce module: spec.nics[].roce against the facts
// (HostFacts::roce, filled by the roce module's discovery). One change per
// attribute that differs, on each selected PF netdev:
//
//   roce/<netdev>/dcbx              before "firmware" after "host"
//   roce/<netdev>/trust             before "pcp"   after "dscp"
//   roce/<netdev>/dscpMap           before {"26":3} after {"26":5}
//   roce/<netdev>/pause             before {"rx":true,"tx":true} after {..false..}
//   roce/<netdev>/pfc               before []      after [3]
//   roce/<netdev>/cableLength       before 7       after 30
//   roce/<netdev>/buffers           before {"prio2buffer":[8],"sizes":[8]} after {...}
//   roce/<netdev>/tos               before null    after 106
//   roce/<netdev>/ecn.roce_np.<p>   before false   after true
//   roce/<netdev>/ecn.roce_rp.<p>   before false   after true
//   roce/<netdev>/cnp.dscp          before 48      after 26
//   roce/<netdev>/cnp.priority      before 6       after 7
//
// ECN and CNP need NVIDIA's out-of-tree mlx5 sysfs (ecn/roce_np/enable/<p>,
// ecn/roce_np/cnp_dscp, cnp_802p_prio); the upstream driver has no ecn/
// directory, and then the firmware planner sets them for the next boot
// (ROCE_CC_PRIO_MASK_P<n>, CNP_DSCP_P<n>, CNP_802P_PRIO_P<n>).
//
// pfc is the exact set of PFC-enabled priorities (one bitmap, as `mlnx_qos
// --pfc` sets it). ecn lists the priorities whose ECN must be on (both
// points); the others are left as they are: DCQCN is on by default on
// ConnectX, and turning it off where other traffic flows is never what a
// lossless-RoCE setting means. All live, not persistent.
#ifndef PROVISIONER_MODULES_ROCE_ROCE_PLANNER_H_
#define PROVISIONER_MODULES_ROCE_ROCE_PLANNER_H_

#include <optional>
#include <string>
#include <vector>

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/plan/change.h"

namespace provisioner {

inline constexpr char kRoceModule[] = "roce";
inline constexpr char kTrustAttribute[] = "trust";
inline constexpr char kPfcAttribute[] = "pfc";
// dcbnl DCBX mode, "host" | "firmware".
inline constexpr char kDcbxAttribute[] = "dcbx";
// {"26": 3, ...}: DSCP -> priority (null: no entry) of the DSCPs host.yaml names.
inline constexpr char kDscpMapAttribute[] = "dscpMap";
// ieee_pfc.delay, meters.
inline constexpr char kCableLengthAttribute[] = "cableLength";
// {"prio2buffer": [8 buffers], "sizes": [8 byte counts]}: DCB_ATTR_DCB_BUFFER.
inline constexpr char kBuffersAttribute[] = "buffers";
// {"rx": bool, "tx": bool}: global pause frames.
inline constexpr char kPauseAttribute[] = "pause";
// The default RoCE ToS (null: unset); detail.file is the file (roce_tos.h).
inline constexpr char kTosAttribute[] = "tos";
// ecn/roce_np/cnp_dscp and cnp_802p_prio, where the driver has them.
inline constexpr char kCnpDscpAttribute[] = "cnp.dscp";
inline constexpr char kCnpPriorityAttribute[] = "cnp.priority";
// "ecn.roce_np.3": the point and the priority of one ECN enable file.
std::string EcnAttribute(const std::string& point, int prio);
struct EcnTarget {
  std::string point;  // roce_np | roce_rp
  int prio = 0;
};
std::optional<EcnTarget> ParseEcnAttribute(const std::string& attribute);

// "[3,4]": a list of priorities as plans, doctor and discover show it.
std::string PriorityList(const std::vector<int>& priorities);

// How every change of this module persists.
inline constexpr char kRoceLiveReason[] = "live; re-applied at every boot by the systemd unit";

// True when some nic asks for RoCE QoS (discovery reads nothing otherwise
// while planning).
bool WantsRoce(const DesiredState& desired);
bool WantsRoce(const NicRoceSpec& roce);

void PlanRoce(const DesiredState& desired, const HostFacts& facts, PlanSink& sink);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_ROCE_ROCE_PLANNER_H_
