// The VF planner: per-VF settings (IB GUIDs, trust, spoof check) and the VF
// driver binding (deviceType), against the discovered PFs. Pure: a function of
// the desired state and the facts.
//
// Changes are planned per PF, from the desired state, because the VFs may not
// exist yet when the plan is made (numVfs 0 -> 8 in the same plan): apply
// resolves the VFs from the PF's virtfnN links when it runs (after numVfs).
//
//   vf/<PF>/ibGuids   before [node GUID per VF | null]  after [GUID per VF]
//   vf/<PF>/trust     before [bool per VF | null]       after bool
//   vf/<PF>/spoofChk  before [bool per VF | null]       after bool
//   vf/<PF>/driver    before [driver per VF | null]     after "vfio-pci" | "mlx5_core" ...
//   vf/<PF>/linkState before [state per VF | null] | null (VFs made by this
//                     plan)  after "auto" | "enable" | "disable"
//   vf/<PF>/rate      before [{min, max} per VF | null] | null  after {min, max} (Mbps)
//   vf/<PF>/vlan      before [{id, qos, proto} per VF | null] | null
//                     after {id, qos, proto: "802.1Q" | "802.1ad"}
//
// An inverse change (rollback) carries an array in `after`: one value per VF.
#ifndef PROVISIONER_MODULES_VF_VF_PLANNER_H_
#define PROVISIONER_MODULES_VF_VF_PLANNER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/plan/change.h"

namespace provisioner {

inline constexpr char kVfModule[] = "vf";
inline constexpr char kIbGuidsAttribute[] = "ibGuids";
inline constexpr char kTrustAttribute[] = "trust";
inline constexpr char kSpoofChkAttribute[] = "spoofChk";
inline constexpr char kDriverAttribute[] = "driver";
inline constexpr char kVfioPci[] = "vfio-pci";
inline constexpr char kLinkStateAttribute[] = "linkState";
inline constexpr char kRateAttribute[] = "rate";
inline constexpr char kVlanAttribute[] = "vlan";

// The VFs a per-VF setting is for: indexes first..last (both included) of a
// PF that has `count` VFs after the numVfs phase; a nic's are 0..count-1, a
// VF group's its range. `nic` and `field_path` name who asked.
struct VfRangeRef {
  int first = 0;
  int last = 0;
  int count = 0;
  std::string nic;
  std::string field_path;  // "spec.nics[0].vfLinkState"
};

// vfLinkState ("auto" | "enable" | "disable") for the VFs of `range` of
// `pf`: the change vf/<PF>/linkState (vf/<PF>/linkState#<first>-<last> for
// part of the VFs), unless every VF there already has it. Detail: first,
// last, count, netdev (the PF's, which carries the message). Errors at
// range.field_path: a range outside 0..count-1, a PF without a netdev.
void PlanVfLinkState(const PciFunction& pf, const std::string& want, const VfRangeRef& range,
                     PlanSink& sink);

// vfRate {min, max} (Mbps, 0 = none) for the VFs of `range` of `pf`: the
// change vf/<PF>/rate (vf/<PF>/rate#<first>-<last> for part of the VFs),
// unless every VF there already has both; as PlanVfLinkState otherwise.
void PlanVfRate(const PciFunction& pf, const VfRateSpec& want, const VfRangeRef& range,
                PlanSink& sink);

// vfVlan {id, qos, proto} for the VFs of `range` of `pf`: the change
// vf/<PF>/vlan (vf/<PF>/vlan#<first>-<last> for part of the VFs), unless
// every VF there already has that VLAN, priority and protocol; as
// PlanVfLinkState otherwise.
void PlanVfVlan(const PciFunction& pf, const VfVlanSpec& want, const VfRangeRef& range,
                PlanSink& sink);

// "vf/0000:af:00.0/driver"
std::string VfChangeId(const std::string& pf, const std::string& attribute);

// A 64-bit GUID from "ec0d:9a03:008a:bcde" (sysfs node_guid) or
// "ec:0d:9a:03:00:8a:bc:de" (ip link, MLNX_OFED sriov/<vf>/node). Hex digits
// in either case.
std::optional<uint64_t> ParseGuid(const std::string& text);
// "ec0d:9a03:008a:bcde", as sysfs node_guid prints it.
std::string FormatGuid(uint64_t guid);
// "ec:0d:9a:03:00:8a:bc:de", as `ip link ... node_guid` and the OFED files take it.
std::string FormatGuidBytes(uint64_t guid);

// The node and port GUID of VF `vf_index` of the PF whose GUID is `pf_guid`:
// the PF's GUID with the locally-administered bit set and the multicast bit
// cleared in byte 0 (as sriov-network-operator marks the GUIDs it makes), and
// bytes 3-4 (Mellanox puts the constant 0x0300 there) replaced by
// vf_index + 1, big-endian:
//   PF ec0d:9a03:008a:bcde -> VF 0 ee0d:9a00:018a:bcde, VF 1 ee0d:9a00:028a:bcde
// Stable (a function of the PF GUID and the index), never zero (bit 0x02 of
// byte 0 is set), unique per VF of a PF and across PFs whose GUIDs differ
// outside bytes 3-4 (the planner checks the whole host). Node and port GUID
// are the same value, as the operators set them. vf_index < 65535.
uint64_t DeriveVfGuid(uint64_t pf_guid, int vf_index);

// For every nic with numVfs > 0 (desired, or current when numVfs is not
// given): VF GUIDs for nics used by an ib-sriov multus config, vfTrust,
// vfSpoofChk (phase kPhaseVfSettings) and deviceType (kPhaseVfBinding).
void PlanVf(const DesiredState& desired, const HostFacts& facts, PlanSink& sink);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_VF_VF_PLANNER_H_
