// One parameter of one card as a nic wants it for the next boot (PlanParam),
// and what every piece of the firmware planner shares (firmware_plan_steps.h).
#include "modules/firmware/firmware_plan_steps.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/model/selector.h"
#include "modules/firmware/firmware_reset.h"
#include "modules/firmware/mstconfig_query.h"

namespace provisioner::firmware_plan {

// The firmware facts of `pf`'s card, or an error message for `field`.
const FirmwareFacts* Lookup(const HostFacts& facts, const PciFunction& pf, const std::string& field,
                            const std::string& what, PlanSink& sink) {
  const std::string dev = FirmwareDevice(pf.pci_address);
  auto it = facts.firmware.find(dev);
  if (it == facts.firmware.end()) {
    sink.Error(field, pf.pci_address + " (vendor " + pf.vendor +
                          ") is not an NVIDIA/Mellanox ConnectX: no firmware " + what +
                          " to set with mstconfig");
    return nullptr;
  }
  const FirmwareFacts& fw = it->second;
  if (fw.unread) {
    // FirmwareCardsToRead and this planner disagree: a bug, said as one.
    sink.Error(field, "internal error: the firmware configuration of " + dev +
                          " was not read for this plan (FirmwareCardsToRead)");
    return nullptr;
  }
  if (fw.tool_missing) {
    sink.Error(field, "cannot read or set the firmware " + what + " of " + dev + ": " + fw.error);
    return nullptr;
  }
  if (!fw.error.empty()) {
    sink.Error(field, "cannot read the firmware configuration of " + dev + ": " + fw.error);
    return nullptr;
  }
  return &fw;
}

// True when the firmware cannot be read but the port already runs `type`:
// nothing to change, so nothing to fail (the next-boot value stays unchecked).
bool RunningMatches(const HostFacts& facts, const PciFunction& pf, const std::string& type) {
  auto it = facts.firmware.find(FirmwareDevice(pf.pci_address));
  if (it == facts.firmware.end() || it->second.error.empty()) return false;
  auto port = it->second.running_link_types.find(FirmwarePort(pf.pci_address));
  return port != it->second.running_link_types.end() && port->second == type;
}

Change FirmwareChange(const std::string& dev, const std::string& param, nlohmann::json before,
                      nlohmann::json after, std::string reason, const std::string& field,
                      const NicSpec& nic, const std::string& pf) {
  // Reboot: the firmware reads its NVconfig at boot.
  Change c = MakeChange(kFirmwareModule, dev, param, std::move(before), std::move(after),
                        Disruption::kReboot, kPhaseFirmware, std::move(reason), field);
  c.detail["nic"] = nic.name;
  c.detail["pf"] = pf;
  return c;
}

// Whether two asks of one parameter mean the same value.
bool SameValue(const std::string& param, const std::string& printed, const std::string& a,
               const std::string& b) {
  auto na = ResolveMstconfigValue(param, printed, a);
  auto nb = ResolveMstconfigValue(param, printed, b);
  if (na && nb) return *na == *nb;
  return MstconfigValueMatches(a, b);
}

// One parameter of `fw` (card `dev`) as `w` wants it for the next boot: no
// change when the Next Boot column already reads it (a warning when Current
// does not: the reboot is pending), else a reboot change. Two nics on one
// card asking different values is an error naming both.
void PlanParam(const FirmwareFacts& fw, const std::string& dev, const Want& w, const NicSpec& nic,
               const std::string& pf, Planned& planned, PlanSink& sink) {
  auto it = fw.params.find(w.param);
  if (it == fw.params.end()) {
    sink.Error(w.field, w.missing);
    return;
  }
  const FirmwareParam& p = it->second;
  const std::string id = std::string(kFirmwareModule) + "/" + dev + "/" + w.param;
  auto [first, inserted] = planned.asked.emplace(id, Asked{w.text, w.field, nic.name, p.next_boot});
  if (!inserted) {
    const Asked& a = first->second;
    if (!SameValue(w.param, a.printed, a.text, w.text)) {
      sink.Error(w.field, "nic " + nic.name + " wants " + w.param + "=" + w.text + " on card " +
                              dev + ", but nic " + a.nic + " (" + a.field + ") wants " + w.param +
                              "=" + a.text + ": one card has one value");
    }
    return;
  }
  if (MstconfigValueMatches(p.next_boot, w.text)) {
    if (p.current && !MstconfigValueMatches(*p.current, w.text)) {
      // Set, pending a reboot (or mstfwreset): plan shows it as pending.
      Change c = FirmwareChange(dev, w.param, w.before(*p.current), w.after,
                                w.show(p.next_boot) + " for the next boot, " +
                                    w.show(*p.current) + " now: reboot (or mstfwreset) to apply it",
                                w.field, nic, pf);
      sink.SetForNextBoot(std::move(c));
    }
    return;
  }
  if (p.read_only) {
    sink.Error(w.field, dev + " " + w.param + " is read-only (mstconfig marks it RO): it reads " +
                            w.show(p.next_boot) + " and cannot be set to " + w.text);
    return;
  }
  planned.Add(sink, FirmwareChange(dev, w.param, w.before(p.next_boot), w.after, w.reason, w.field,
                                   nic, pf));
}

std::string DeviceType(const FirmwareFacts& fw) {
  return fw.device_type.empty() ? "unknown type" : fw.device_type;
}

void CopyInto(PlanSink& from, PlanSink& to) {
  for (Change& c : from.changes()) to.AddChange(std::move(c));
  for (Change& c : from.set_for_next_boot()) to.SetForNextBoot(std::move(c));
  for (const Diagnostic& d : from.diagnostics()) {
    if (d.severity == Severity::kError) {
      to.Error(d.path, d.message);
    } else {
      to.Warning(d.path, d.message);
    }
  }
}

}  // namespace provisioner::firmware_plan
