// discover output of the link module: each NIC's PF netdevs' mtu and admin
// state (`links`, absent when none was read).
#include "engine/output/facts_output.h"
#include "modules/link/link_module.h"

namespace provisioner {

using nlohmann::json;

void LinkModule::RenderFactsJson(const HostFacts& facts, FactsJson& out) const {
  for (const PciFunction* f : facts.Nics()) {
    json* nic = out.Nic(f->pci_address);
    if (nic == nullptr) continue;
    json links = json::array();
    for (const auto& nd : f->netdevs) {
      auto it = facts.links.find(nd);
      if (it == facts.links.end()) continue;
      json l = {{"name", nd},
                {"mtu", it->second.mtu},
                {"adminUp", it->second.admin_up},
                {"operState", it->second.operstate}};
      if (it->second.min_mtu) l["minMtu"] = *it->second.min_mtu;
      if (it->second.max_mtu) l["maxMtu"] = *it->second.max_mtu;
      links.push_back(std::move(l));
    }
    if (!links.empty()) (*nic)["links"] = links;
  }
}

}  // namespace provisioner
