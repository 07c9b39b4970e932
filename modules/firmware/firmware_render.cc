// discover output of the firmware module: each NIC's card (`firmware`: the
// query's source or error, this PF's port type and the SR-IOV limits).
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
    (*nic)["firmware"] = j;
  }
}

}  // namespace provisioner
