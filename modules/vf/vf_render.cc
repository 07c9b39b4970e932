// discover output of the vf module: its per-VF facts, added to the sriov
// module's VF entries (the same order as the facts' VFs).
#include "engine/output/facts_output.h"
#include "modules/vf/vf_module.h"

namespace provisioner {

using nlohmann::json;

void VfModule::RenderFactsJson(const HostFacts& facts, FactsJson& out) const {
  for (const PciFunction* f : facts.Nics()) {
    json* nic = out.Nic(f->pci_address);
    if (nic == nullptr || !f->sriov || !nic->contains("sriov") || !(*nic)["sriov"].is_object()) {
      continue;
    }
    json& vfs = (*nic)["sriov"]["vfs"];
    for (size_t k = 0; k < f->sriov->vfs.size() && k < vfs.size(); ++k) {
      const VfInfo& vf = f->sriov->vfs[k];
      json& v = vfs[k];
      if (v.value("pciAddress", "") != vf.pci_address) continue;
      if (!vf.driver_override.empty()) v["driverOverride"] = vf.driver_override;
      if (!vf.ib_node_guid.empty()) v["nodeGuid"] = vf.ib_node_guid;
      if (!vf.ib_port_guid.empty()) v["portGuid"] = vf.ib_port_guid;
      if (vf.trust) v["trust"] = *vf.trust;
      if (vf.spoof_chk) v["spoofChk"] = *vf.spoof_chk;
      if (vf.link_state) v["linkState"] = *vf.link_state;
      if (vf.min_tx_rate && vf.max_tx_rate) {
        v["rate"] = {{"min", *vf.min_tx_rate}, {"max", *vf.max_tx_rate}};
      }
      if (vf.mac) v["mac"] = *vf.mac;  // the PF's table (IFLA_VF_MAC), not the netdev's
      if (vf.vlan_id && vf.vlan_qos && vf.vlan_proto) {
        v["vlan"] = {{"id", *vf.vlan_id}, {"qos", *vf.vlan_qos}, {"proto", *vf.vlan_proto}};
      }
    }
  }
}

}  // namespace provisioner
