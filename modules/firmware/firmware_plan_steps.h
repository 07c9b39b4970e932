// The steps of the firmware planner (PlanFirmware, firmware_planner.cc), one
// file each, and what they share. Internal to modules/firmware:planner.
//   firmware_param_plan.cc         one parameter of one card (PlanParam)
//   firmware_link_type_plan.cc     spec.nics[].linkType
//   firmware_raw_params_plan.cc    spec.nics[].firmware
//   firmware_roce_vf_limit_plan.cc roce.ecn/cnp without a driver setting, numVfs
//   firmware_version_plan.cc       spec.nics[].firmwareVersion
//   firmware_activation_plan.cc    spec.firmware.activation: reset
#ifndef PROVISIONER_MODULES_FIRMWARE_FIRMWARE_PLAN_STEPS_H_
#define PROVISIONER_MODULES_FIRMWARE_FIRMWARE_PLAN_STEPS_H_

#include <functional>
#include <map>
#include <set>
#include <string>

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/plan/change.h"
#include "modules/firmware/firmware_planner.h"
#include "nlohmann/json.hpp"

namespace provisioner::firmware_plan {

// What one nic asks of one parameter of one card. linkType and
// firmware: { PARAM: value } both come here; they differ in how values
// read (linkType shows "ib"/"eth", raw parameters as written) and in their
// messages.
struct Want {
  std::string param;  // "LINK_TYPE_P1", "ATS_ENABLED"
  std::string text;   // compared with the printed value: "2", "true", "ETH"
  nlohmann::json after;
  std::string field;  // "spec.nics[0].linkType", "spec.nics[0].firmware.ATS_ENABLED"
  std::string reason;
  // The plan's `before` from the printed next-boot value, and how a printed
  // value reads in a warning.
  std::function<nlohmann::json(const std::string&)> before;
  std::function<std::string(const std::string&)> show;
  // The error when the card's query has no such parameter.
  std::string missing;
};

struct Asked {
  std::string text;
  std::string field;
  std::string nic;
  std::string printed;  // next boot when asked, for comparing two asks
};

struct Planned {
  std::set<std::string> ids;
  // Per change id, the first nic that asked for its value.
  std::map<std::string, Asked> asked;
  void Add(PlanSink& sink, Change c) {
    if (ids.insert(c.id).second) sink.AddChange(std::move(c));
  }
};

// The firmware facts of `pf`'s card, or an error for `field` (nullptr).
const FirmwareFacts* Lookup(const HostFacts& facts, const PciFunction& pf, const std::string& field,
                            const std::string& what, PlanSink& sink);
// True when the firmware cannot be read but the port already runs `type`.
bool RunningMatches(const HostFacts& facts, const PciFunction& pf, const std::string& type);
// A reboot change of one parameter, naming the nic and the PF.
Change FirmwareChange(const std::string& dev, const std::string& param, nlohmann::json before,
                      nlohmann::json after, std::string reason, const std::string& field,
                      const NicSpec& nic, const std::string& pf);
// One parameter of `fw` (card `dev`) as `w` wants it for the next boot.
void PlanParam(const FirmwareFacts& fw, const std::string& dev, const Want& w, const NicSpec& nic,
               const std::string& pf, Planned& planned, PlanSink& sink);
// "ConnectX5", or "unknown type".
std::string DeviceType(const FirmwareFacts& fw);
// The changes and diagnostics of `from` into `to`.
void CopyInto(PlanSink& from, PlanSink& to);

void PlanLinkType(const NicSpec& nic, const std::string& path, const HostFacts& facts,
                  Planned& planned, PlanSink& sink);
void PlanRawFirmware(const NicSpec& nic, const std::string& path, const HostFacts& facts,
                     Planned& planned, PlanSink& sink);

// What a nic's roce settings need of the firmware of one PF: the driver
// settings that are missing (NVIDIA's out-of-tree mlx5 has ecn/roce_np/...,
// the upstream driver no ecn/ directory at all). Nothing when the roce facts
// of its netdev were not read or failed: the roce planner says so.
struct RoceFirmwareNeeds {
  std::string ifname;
  bool ecn = false;       // ROCE_CC_PRIO_MASK_P<n>
  bool cnp_dscp = false;  // CNP_DSCP_P<n>
  bool cnp_prio = false;  // CNP_802P_PRIO_P<n>
  bool Any() const { return ecn || cnp_dscp || cnp_prio; }
};
RoceFirmwareNeeds RoceNeeds(const NicSpec& nic, const PciFunction& pf, const HostFacts& facts);
void PlanRoceFirmware(const NicSpec& nic, const std::string& path, const HostFacts& facts,
                      Planned& planned, PlanSink& sink);
void PlanVfLimit(const NicSpec& nic, const std::string& path, const HostFacts& facts,
                 Planned& planned, PlanSink& sink);
// linkType, firmware, the VF limit and roce of every nic.
void PlanSettings(const DesiredState& desired, const HostFacts& facts, Planned& planned,
                  PlanSink& sink);

// nics[].firmwareVersion; `pending` gets the cards whose flash already holds
// the pinned version (their activation is what is left).
void PlanFirmwareVersions(const DesiredState& desired, const HostFacts& facts, PlanSink& sink,
                          std::set<std::string>& pending);
// spec.firmware.activation: reset, for the changes from index `from` on.
void PlanActivation(const DesiredState& desired, const HostFacts& facts, size_t from,
                    const Planned& planned, const std::set<std::string>& pending_burns,
                    PlanSink& sink);

}  // namespace provisioner::firmware_plan

#endif  // PROVISIONER_MODULES_FIRMWARE_FIRMWARE_PLAN_STEPS_H_
