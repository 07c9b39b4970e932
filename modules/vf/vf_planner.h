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
//   vf/<PF>/mac       before [table MAC per VF | null] | null
//                     after "keep" | {mode: "derived", macs: [MAC per VF of the range]}
//
// An inverse change (rollback) carries an array in `after`: one value per VF.
#ifndef PROVISIONER_MODULES_VF_VF_PLANNER_H_
#define PROVISIONER_MODULES_VF_VF_PLANNER_H_

#include <array>
#include <cstdint>
#include <map>
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
inline constexpr char kMacAttribute[] = "mac";
inline constexpr char kVfMacKeep[] = "keep";
inline constexpr char kVfMacDerived[] = "derived";

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

// vfMac ("keep" | "derived") for the VFs of `range` of `pf`: the change
// vf/<PF>/mac (vf/<PF>/mac#<first>-<last> for part of the VFs), before the
// table MAC per VF, after "keep" or {"mode": "derived", "macs": [one per VF
// of the range]}. A VF is done when its table MAC is not zero,
// its netdev (if bound to one) has that MAC, and for derived it is
// DeriveVfMac's. Errors at range.field_path: an InfiniBand port, derived
// without the PF's burnt-in MAC (unknown, or addr_assign_type not 0), keep on
// a VF bound to a userspace driver with no MAC in the table; as
// PlanVfLinkState otherwise.
//
// `mac_owner`, when given, holds every MAC of the host planned or known so
// far (MAC -> who has it, "PF 0000:af:00.0", "VF 3 of 0000:af:00.0"): a
// derived MAC already there is an error at range.field_path; the range's
// MACs are added to it.
void PlanVfMac(const PciFunction& pf, const std::string& want, const VfRangeRef& range,
               PlanSink& sink, std::map<std::string, std::string>* mac_owner = nullptr);

// The 6 bytes of an Ethernet MAC "aa:bb:cc:dd:ee:ff" (either case); nullopt
// for anything else.
std::optional<std::array<uint8_t, 6>> ParseMacAddress(const std::string& text);
// "aa:bb:cc:dd:ee:ff" (lower case, as sysfs and `ip link` print it).
std::string FormatMacAddress(const uint8_t* mac);

// The MAC of VF `vf_index` of the PF whose burnt-in MAC is `pf_mac`: the
// low 48 bits of H = fmix64(FNV-1a-64(the PF MAC's six bytes, then vf_index
// as two bytes big-endian)), most significant first, with the multicast bit
// of byte 0 cleared and its locally administered bit set: 46 bits from the
// hash. FNV-1a 64: offset basis 0xcbf29ce484222325, prime 0x100000001b3;
// fmix64: MurmurHash3's 64-bit finalizer (x ^= x >> 33; x *= 0xff51afd7ed558ccd;
// x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53; x ^= x >> 33).
//   PF b8:ce:f6:8a:bc:de -> VF 0 see vf_planner_test (VfMacTest)
// Stable, unicast, never a burnt-in MAC (those are universally
// administered), and every byte of the PF MAC counts: two vendors' OUIs with
// the same byte 0 and the same low bytes give unrelated MACs. Not unique by
// construction: PlanVf checks the host (a duplicate is a plan error);
// docs/host-yaml.md gives the fleet's collision probability. "" for a bad
// `pf_mac` or vf_index outside 0..65534.
std::string DeriveVfMac(const std::string& pf_mac, int vf_index);

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
