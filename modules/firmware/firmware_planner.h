// The firmware planner: spec.nics[].linkType (LINK_TYPE_P<n>), the raw
// parameters of spec.nics[].firmware and, for numVfs above what the firmware
// enables, SRIOV_EN / NUM_OF_VFS. Pure: a function of
// the desired state and the facts (HostFacts::firmware).
//
//   firmware/<card BDF>/LINK_TYPE_P1  before "ib"  after "eth"   (disruption reboot)
//   firmware/<card BDF>/SRIOV_EN      before false after true
//   firmware/<card BDF>/NUM_OF_VFS    before 8     after 16
//   firmware/<card BDF>/ATS_ENABLED   before false after true    (firmware: { ATS_ENABLED: true })
//   firmware/<card BDF>/ROCE_CC_PRIO_MASK_P1  before 3  after 11  (roce.ecn [3], no ecn/ in sysfs)
//   firmware/<card BDF>/CNP_DSCP_P1   before 48    after 26      (roce.cnp.dscp, no cnp_dscp)
//
// Values compare against the firmware's Next Boot column: a value already
// set for the next boot is no new change; when the running (Current) value
// still differs, the plan warns that a reboot is pending.
#ifndef PROVISIONER_MODULES_FIRMWARE_FIRMWARE_PLANNER_H_
#define PROVISIONER_MODULES_FIRMWARE_FIRMWARE_PLANNER_H_

#include <map>
#include <optional>
#include <set>
#include <string>

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/plan/change.h"
#include "nlohmann/json.hpp"

namespace provisioner {

inline constexpr char kFirmwareModule[] = "firmware";
// The two changes that are no parameter (lower case: no mstconfig name is):
//   firmware/<card>/nvconfig  before {PARAM: next boot, ...} after "defaults"
//     (nics[].firmwareReset: `mstconfig -d <card> -y reset`, before the sets)
//   firmware/<card>/activate  before {PARAM: running} after {PARAM: next boot}
//     (spec.firmware.activation: reset: `mstfwreset ... -l 3 reset`, after
//     them; disruption firmware-reset, as the card's sets then are)
//   firmware/<card>/burn      before "16.35.2000" (running) after "16.35.3006"
//     (nics[].firmwareVersion policy update: `mstflint -d <card> -i <image>
//     -y burn`, before the sets; not reversible: its rollback does nothing;
//     detail {image, psid, version, inverse: "none"}; takes effect as
//     spec.firmware.activation says)
inline constexpr char kNvConfigAttribute[] = "nvconfig";
inline constexpr char kBurnAttribute[] = "burn";
inline constexpr char kActivateAttribute[] = "activate";

void PlanFirmware(const DesiredState& desired, const HostFacts& facts, PlanSink& sink);

// The cards (BDF of function .0) whose configuration a plan of `desired`
// reads, and so the only ones `plan`/`apply` query: those of the PFs that
// nics with linkType or firmware parameters select (or firmwareVersion policy
// update with spec.firmware.activation reset: the reset checks the card), of the PFs whose netdev
// lacks the ECN/CNP sysfs a nic's roce asks for (facts.roce), and of the PFs whose
// numVfs is above what the kernel offers now (sriov_totalvfs, or no SR-IOV
// at all: the firmware may raise it, the sriov planner asks). numVfs within
// sriov_totalvfs reads no firmware: a next-boot SRIOV_EN/NUM_OF_VFS below it
// is then left alone. Pure; `facts` need pci, sriov and topology (nearGpu).
std::set<std::string> FirmwareCardsToRead(const DesiredState& desired, const HostFacts& facts);

// The number mstconfig takes for a change's `after` ("eth" -> 2, true -> 1,
// 16 -> 16), checked: plans may come from a file.
StatusOr<long> FirmwareValue(const Change& change);

// The VALUE of `mstconfig set NAME=VALUE` for a change: FirmwareValue's
// number, or a raw parameter's value name as written ("ETH"; letters, digits
// and '_' only).
StatusOr<std::string> FirmwareSetText(const Change& change);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_FIRMWARE_FIRMWARE_PLANNER_H_
