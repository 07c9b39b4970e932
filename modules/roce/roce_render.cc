// discover output of the roce module: per NIC, its PF netdevs' DCB trust,
// PFC-enabled priorities and ECN-enabled priorities (`roce`, absent when
// nothing was read), and a table section.
#include <string>
#include <vector>

#include "engine/output/facts_output.h"
#include "modules/roce/roce_module.h"
#include "modules/roce/roce_planner.h"

namespace provisioner {
namespace {

using nlohmann::json;

std::vector<int> Enabled(const std::map<int, bool>& m) {
  std::vector<int> out;
  for (const auto& [p, on] : m) {
    if (on) out.push_back(p);
  }
  return out;
}

bool AnythingRead(const RoceNetdevFacts& f) { return f.trust.has_value() || f.ecn_dir; }

}  // namespace

void RoceModule::RenderFactsJson(const HostFacts& facts, FactsJson& out) const {
  if (!facts.roce.discovered) return;
  for (const PciFunction* f : facts.Nics()) {
    json* nic = out.Nic(f->pci_address);
    if (nic == nullptr) continue;
    json list = json::array();
    for (const std::string& nd : f->netdevs) {
      auto it = facts.roce.netdevs.find(nd);
      if (it == facts.roce.netdevs.end() || !AnythingRead(it->second)) continue;
      const RoceNetdevFacts& r = it->second;
      json e = {{"netdev", nd}};
      if (r.trust) e["trust"] = *r.trust;
      if (r.pfc) e["pfc"] = *r.pfc;
      if (!r.dcb_error.empty()) e["dcbError"] = r.dcb_error;
      if (r.ecn_dir) {
        e["ecn"] = {{"roceNp", Enabled(r.ecn_np)}, {"roceRp", Enabled(r.ecn_rp)}};
      }
      if (!r.ecn_error.empty()) e["ecnError"] = r.ecn_error;
      list.push_back(std::move(e));
    }
    if (!list.empty()) (*nic)["roce"] = list;
  }
}

std::string RoceModule::RenderFactsTable(const HostFacts& facts) const {
  std::vector<std::vector<std::string>> rows = {{"NETDEV", "TRUST", "PFC", "ECN NP", "ECN RP"}};
  for (const PciFunction* f : facts.Nics()) {
    for (const std::string& nd : f->netdevs) {
      auto it = facts.roce.netdevs.find(nd);
      if (it == facts.roce.netdevs.end() || !AnythingRead(it->second)) continue;
      const RoceNetdevFacts& r = it->second;
      rows.push_back({nd, r.trust.value_or("?"), r.pfc ? PriorityList(*r.pfc) : "?",
                      r.ecn_dir ? PriorityList(Enabled(r.ecn_np)) : "-",
                      r.ecn_dir ? PriorityList(Enabled(r.ecn_rp)) : "-"});
    }
  }
  if (rows.size() == 1) return "";
  return "\nRoCE QoS (priorities with PFC / ECN enabled):\n" + TextTable(rows, "  ");
}

}  // namespace provisioner
