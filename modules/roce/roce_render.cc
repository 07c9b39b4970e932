// discover output of the roce module: per NIC, its PF netdevs' DCB trust,
// PFC-enabled priorities and ECN-enabled priorities, DCBX mode, DSCP map
// (the entries that differ from DSCP >> 3), global pause and default RoCE
// ToS, cable length and port buffers (`roce`, absent when nothing was
// read), and table sections.
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

bool AnythingRead(const RoceNetdevFacts& f) {
  return f.trust.has_value() || f.ecn_dir || f.pause_rx.has_value() || !f.tos_file.empty();
}

std::string PauseText(const RoceNetdevFacts& r) {
  if (!r.pause_rx || !r.pause_tx) return "?";
  if (*r.pause_rx == *r.pause_tx) return *r.pause_rx ? "on" : "off";
  return std::string("rx ") + (*r.pause_rx ? "on" : "off") + " tx " + (*r.pause_tx ? "on" : "off");
}

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
      if (r.dcbx) e["dcbx"] = *r.dcbx;
      if (r.trust && *r.trust == "dscp") {
        // The entries that differ from the default map (priority = DSCP >> 3).
        json map = json::object();
        for (const auto& [d, p] : r.dscp_map) {
          if (p != ((d >> 3) & 7)) map[std::to_string(d)] = p;
        }
        e["dscpMap"] = map;
      }
      if (r.cable_length) e["cableLength"] = *r.cable_length;
      if (r.prio2buffer && r.buffer_sizes) {
        e["buffers"] = {
            {"prio2buffer", *r.prio2buffer}, {"sizes", *r.buffer_sizes}, {"total", r.buffer_total}};
      }
      if (!r.dcb_error.empty()) e["dcbError"] = r.dcb_error;
      if (r.pause_rx && r.pause_tx) e["pause"] = {{"rx", *r.pause_rx}, {"tx", *r.pause_tx}};
      if (!r.tos_file.empty()) {
        e["tos"] = r.tos ? json(*r.tos) : json(nullptr);
        e["tosFile"] = r.tos_file;
      }
      if (!r.tos_error.empty()) e["tosError"] = r.tos_error;
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
  std::vector<std::vector<std::string>> rows = {
      {"NETDEV", "TRUST", "PFC", "ECN NP", "ECN RP", "DCBX", "PAUSE", "TOS"}};
  for (const PciFunction* f : facts.Nics()) {
    for (const std::string& nd : f->netdevs) {
      auto it = facts.roce.netdevs.find(nd);
      if (it == facts.roce.netdevs.end() || !AnythingRead(it->second)) continue;
      const RoceNetdevFacts& r = it->second;
      rows.push_back({nd, r.trust.value_or("?"), r.pfc ? PriorityList(*r.pfc) : "?",
                      r.ecn_dir ? PriorityList(Enabled(r.ecn_np)) : "-",
                      r.ecn_dir ? PriorityList(Enabled(r.ecn_rp)) : "-", r.dcbx.value_or("-"),
                      PauseText(r),
                      r.tos_file.empty() ? "-" : (r.tos ? std::to_string(*r.tos) : "unset")});
    }
  }
  if (rows.size() == 1) return "";
  std::string out = "\nRoCE QoS (priorities with PFC / ECN enabled):\n" + TextTable(rows, "  ");
  // The port receive buffers, where the driver reports them (dcbnl).
  std::vector<std::vector<std::string>> bufs = {
      {"NETDEV", "CABLE", "PRIO2BUFFER", "BUFFER SIZES (bytes)", "TOTAL"}};
  for (const PciFunction* f : facts.Nics()) {
    for (const std::string& nd : f->netdevs) {
      auto it = facts.roce.netdevs.find(nd);
      if (it == facts.roce.netdevs.end() || !it->second.prio2buffer) continue;
      const RoceNetdevFacts& r = it->second;
      bufs.push_back({nd, r.cable_length ? std::to_string(*r.cable_length) + " m" : "-",
                      json(*r.prio2buffer).dump(),
                      json(r.buffer_sizes.value_or(std::vector<long long>{})).dump(),
                      std::to_string(r.buffer_total)});
    }
  }
  if (bufs.size() > 1) out += "\nRoCE port buffers:\n" + TextTable(bufs, "  ");
  return out;
}

}  // namespace provisioner
