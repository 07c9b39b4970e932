// discover output of the firmware module: each NIC's card (`firmware`: the
// query's source or error, this PF's port type and the SR-IOV limits).
#include <string>
#include <vector>

#include "engine/output/facts_output.h"
#include "modules/firmware/firmware_module.h"

namespace provisioner {

using nlohmann::json;

void FirmwareModule::RenderFactsJson(const HostFacts& facts, FactsJson& out) const {
  for (const PciFunction* f : facts.Nics()) {
    json* nic = out.Nic(f->pci_address);
    auto fw = facts.firmware.find(FirmwareDevice(f->pci_address));
    if (nic == nullptr || fw == facts.firmware.end()) continue;
    json j = {{"device", fw->first}, {"source", fw->second.source}};
    if (!fw->second.error.empty()) j["error"] = fw->second.error;
    if (!fw->second.device_type.empty()) j["deviceType"] = fw->second.device_type;
    const std::string port = "LINK_TYPE_P" + std::to_string(FirmwarePort(f->pci_address));
    for (const std::string& name : {port, std::string("SRIOV_EN"), std::string("NUM_OF_VFS")}) {
      auto p = fw->second.params.find(name);
      if (p == fw->second.params.end()) continue;
      json v = {{"nextBoot", p->second.next_boot}};
      if (p->second.current) v["current"] = *p->second.current;
      j["parameters"][name] = v;
    }
    // The firmware version and PSID (`mstflint -d <card> query`): "version"
    // is on the flash, "running" only while a burned image waits for a
    // reset (FW Version(Running)).
    if (!fw->second.flint_source.empty()) j["versionSource"] = fw->second.flint_source;
    if (!fw->second.flint_error.empty()) {
      j["versionError"] = fw->second.flint_error;
    } else if (!fw->second.fw_version.empty()) {
      j["version"] = fw->second.fw_version;
      if (!fw->second.fw_running.empty()) j["running"] = fw->second.fw_running;
      if (!fw->second.psid.empty()) j["psid"] = fw->second.psid;
    }
    (*nic)["firmware"] = j;
  }
}

std::string FirmwareModule::RenderFactsTable(const HostFacts& facts) const {
  std::vector<std::vector<std::string>> rows = {
      {"CARD", "PSID", "FW VERSION", "RUNNING", "SOURCE"}};
  for (const auto& [dev, fw] : facts.firmware) {
    if (fw.flint_source.empty()) continue;  // not read (no capture, no mstflint)
    if (!fw.flint_error.empty()) {
      rows.push_back({dev, "?", "?", "?", fw.flint_error});
      continue;
    }
    rows.push_back({dev, fw.psid.empty() ? "-" : fw.psid, fw.fw_version,
                    fw.fw_running.empty() ? fw.fw_version : fw.fw_running + " (reset pending)",
                    fw.flint_source});
  }
  if (rows.size() == 1) return "";
  return "\nFirmware (mstflint -d <card> query):\n" + TextTable(rows, "  ");
}

}  // namespace provisioner
