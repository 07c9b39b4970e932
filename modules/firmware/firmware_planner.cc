#include "modules/firmware/firmware_planner.h"

#include <set>
#include <utility>

#include "engine/model/selector.h"
#include "modules/firmware/mstconfig_query.h"

namespace provisioner {
namespace {

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
  Change c;
  c.id = std::string(kFirmwareModule) + "/" + dev + "/" + param;
  c.module = kFirmwareModule;
  c.target = dev;
  c.attribute = param;
  c.before = std::move(before);
  c.after = std::move(after);
  c.disruption = Disruption::kReboot;  // firmware reads its NVconfig at boot
  c.reason = std::move(reason);
  c.phase = kPhaseFirmware;
  c.field_path = field;
  c.detail = nlohmann::json::object();
  c.detail["nic"] = nic.name;
  c.detail["pf"] = pf;
  return c;
}

struct Planned {
  std::set<std::string> ids;
  void Add(PlanSink& sink, Change c) {
    if (ids.insert(c.id).second) sink.AddChange(std::move(c));
  }
};

void PlanLinkType(const NicSpec& nic, const std::string& path, const HostFacts& facts,
                  Planned& planned, PlanSink& sink) {
  const std::string field = path + ".linkType";
  auto want = LinkTypeValue(*nic.link_type);
  if (!want) {
    sink.Error(field, "must be eth or ib, not " + *nic.link_type);
    return;
  }
  std::vector<const PciFunction*> pfs = SelectPfs(nic, facts);
  // With numVfs the sriov planner reports a selector matching nothing.
  // With nearGpu the topology module says why.
  if (pfs.empty() && !nic.num_vfs && !nic.selector.near_gpu) {
    sink.Error(path + ".nicSelector", "selects no PCI function on this host");
  }
  for (const PciFunction* pf : pfs) {
    if (RunningMatches(facts, *pf, *nic.link_type)) continue;
    const FirmwareFacts* fw = Lookup(facts, *pf, field, "link type", sink);
    if (fw == nullptr) continue;
    const std::string dev = FirmwareDevice(pf->pci_address);
    const std::string param = "LINK_TYPE_P" + std::to_string(FirmwarePort(pf->pci_address));
    auto it = fw->params.find(param);
    if (it == fw->params.end()) {
      sink.Error(field, "the firmware of " + dev + " (" +
                            (fw->device_type.empty() ? "unknown type" : fw->device_type) +
                            ") has no " + param + ": its port type is fixed (not a VPI card)");
      continue;
    }
    auto next = MstconfigValueNumber(it->second.next_boot);
    if (!next) {
      sink.Error(field,
                 dev + " " + param + " reads \"" + it->second.next_boot + "\", not a number");
      continue;
    }
    if (*next == *want) {
      auto cur = it->second.current ? MstconfigValueNumber(*it->second.current) : std::nullopt;
      if (cur && *cur != *want) {
        sink.Warning(field, dev + " " + param + " is " + LinkTypeName(*want) +
                                " for the next boot, " + LinkTypeName(*cur) +
                                " now: reboot (or mstfwreset) to apply it");
      }
      continue;
    }
    planned.Add(
        sink, FirmwareChange(dev, param, LinkTypeName(*next), *nic.link_type,
                             "nic " + nic.name + " wants linkType " + *nic.link_type + " (port " +
                                 param.substr(11) + " of " + dev + "; takes effect after a reboot)",
                             field, nic, pf->pci_address));
  }
}

// numVfs above what the firmware enables: SRIOV_EN=1, NUM_OF_VFS >= numVfs.
// Only for cards whose configuration could be read; otherwise the sriov
// planner's error about sriov_totalvfs stands.
void PlanVfLimit(const NicSpec& nic, const std::string& path, const HostFacts& facts,
                 Planned& planned, PlanSink& sink) {
  const int want = *nic.num_vfs;
  const std::string field = path + ".numVfs";
  for (const PciFunction* pf : SelectPfs(nic, facts)) {
    auto it = facts.firmware.find(FirmwareDevice(pf->pci_address));
    if (it == facts.firmware.end() || !it->second.error.empty()) continue;
    const FirmwareFacts& fw = it->second;
    const std::string dev = it->first;
    if (auto en = fw.params.find("SRIOV_EN"); en != fw.params.end()) {
      auto next = MstconfigValueNumber(en->second.next_boot);
      if (next && *next == 0) {
        planned.Add(sink, FirmwareChange(dev, "SRIOV_EN", false, true,
                                         "nic " + nic.name + " wants " + std::to_string(want) +
                                             " VFs: the firmware of " + dev +
                                             " has SR-IOV off (takes effect after a reboot)",
                                         field, nic, pf->pci_address));
      }
    }
    if (auto n = fw.params.find("NUM_OF_VFS"); n != fw.params.end()) {
      auto next = MstconfigValueNumber(n->second.next_boot);
      if (next && *next < want) {
        planned.Add(sink,
                    FirmwareChange(dev, "NUM_OF_VFS", *next, want,
                                   "nic " + nic.name + " wants " + std::to_string(want) +
                                       " VFs: the firmware of " + dev + " enables " +
                                       std::to_string(*next) + " (takes effect after a reboot)",
                                   field, nic, pf->pci_address));
      }
    }
  }
}

}  // namespace

void PlanFirmware(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) {
  Planned planned;
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    const NicSpec& nic = desired.nics[i];
    const std::string path = DesiredState::NicPath(i);
    // A selector matching nothing is reported by the modules that need PFs
    // (sriov); the firmware planner has nothing to add then.
    if (nic.link_type) PlanLinkType(nic, path, facts, planned, sink);
    if (nic.num_vfs && *nic.num_vfs > 0) PlanVfLimit(nic, path, facts, planned, sink);
  }
}

StatusOr<long> FirmwareValue(const Change& change) {
  const nlohmann::json& a = change.after;
  if (change.attribute.rfind("LINK_TYPE_P", 0) == 0 && a.is_string()) {
    const std::string s = a.get<std::string>();
    if (auto v = LinkTypeValue(s)) return *v;
    if (s == "vpi") return 3;
  } else if (change.attribute == "SRIOV_EN" && a.is_boolean()) {
    return a.get<bool>() ? 1 : 0;
  } else if (change.attribute == "NUM_OF_VFS" && a.is_number_integer() && a.get<long long>() >= 0 &&
             a.get<long long>() <= 65535) {
    return static_cast<long>(a.get<long long>());
  }
  return InvalidArgumentError(change.id + ": firmware parameter " + change.attribute +
                              " cannot be set to " + a.dump());
}

}  // namespace provisioner
