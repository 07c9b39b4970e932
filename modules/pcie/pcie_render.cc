// discover output of the pcie module: `pcie` in the JSON, and the table's
// "PCIe" section: each NIC PF and each root/downstream port with what its
// config space says (ACS Control, MaxReadReq), its link, and the GPU<->NIC
// paths a port lies on (the paths disableAcs: gpuNicPaths clears).
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/output/facts_output.h"
#include "modules/pcie/pcie_config.h"
#include "modules/pcie/pcie_module.h"
#include "modules/pcie/pcie_planner.h"

namespace provisioner {
namespace {

std::string PortKind(const PcieFunctionFacts& f) {
  switch (f.port_type) {
    case kPciExpTypeRootPort:
      return "root port";
    case kPciExpTypeDownstream:
      return "downstream port";
    default:
      return "port";
  }
}

std::string Link(const PcieFunctionFacts& f) {
  if (f.link_speed.empty()) return "-";
  std::string s = f.link_speed;
  // "32.0 GT/s PCIe" -> "32.0 GT/s"
  if (const size_t pcie = s.find(" PCIe"); pcie != std::string::npos) s.erase(pcie);
  return f.link_width > 0 ? s + " x" + std::to_string(f.link_width) : s;
}

// "0000:19:00.0<->0000:1a:00.0" for each GPU<->NIC path through `bdf`.
std::map<std::string, std::vector<std::string>> PathsByPort(const HostFacts& facts) {
  std::map<std::string, std::vector<std::string>> by_port;
  for (const GpuNicPath& p : GpuNicPaths(facts, facts.Nics())) {
    for (const std::string& bridge : p.bridges) by_port[bridge].push_back(p.gpu + "<->" + p.nic);
  }
  return by_port;
}

}  // namespace

// discover -o json: "pcie": {"functions": {bdf: {portType, acsControl,
// maxReadRequest, linkSpeed, linkWidth}}, "unreadable": {bdf: why}} for the
// functions whose config space was read, and what could not be.
void PcieModule::RenderFactsJson(const HostFacts& facts, FactsJson& out) const {
  if (!facts.pcie.discovered) return;
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [bdf, f] : facts.pcie.functions) {
    nlohmann::json e = nlohmann::json::object();
    e["portType"] = f.port_type;
    if (f.acs_offset) e["acsControl"] = Hex16(f.acs_control);
    if (f.express_offset) e["maxReadRequest"] = f.MaxReadRequest();
    if (f.express_not_captured || f.AcsNotCaptured()) e["configBytes"] = f.config_size;
    if (f.express_not_captured) e["expressCapability"] = "not captured";
    if (!f.link_speed.empty()) e["linkSpeed"] = f.link_speed;
    if (f.link_width > 0) e["linkWidth"] = f.link_width;
    j["functions"][bdf] = e;
  }
  for (const auto& [bdf, why] : facts.pcie.unreadable) j["unreadable"][bdf] = why;
  out.doc()["pcie"] = j;
}

std::string PcieModule::RenderFactsTable(const HostFacts& facts) const {
  if (!facts.pcie.discovered) return "";
  const PcieFacts& p = facts.pcie;
  std::set<std::string> nics;
  for (const PciFunction* f : facts.Nics()) nics.insert(f->pci_address);
  const auto paths = PathsByPort(facts);
  std::vector<std::vector<std::string>> rows = {
      {"PCI", "KIND", "ACS CTL", "MAXREADREQ", "LINK", "GPU<->NIC PATHS"}};
  for (const auto& [bdf, f] : p.functions) {
    const bool nic = nics.count(bdf) != 0;
    // Upstream ports and other bridges are left out; a bridge whose port
    // type is not in the bytes read is shown with '?'.
    if (!nic && !f.IsDownstreamPort() && !f.express_not_captured) continue;
    std::string kind = f.express_not_captured ? "bridge (type ?)" : PortKind(f);
    if (nic) {
      const PciFunction* pf = facts.FindPci(bdf);
      kind = "NIC";
      if (pf != nullptr && !pf->netdevs.empty()) kind += " " + JoinNames(pf->netdevs);
    }
    std::string acs = "-";
    if (f.acs_offset) {
      acs = Hex16(f.acs_control);
    } else if (!nic && f.AcsNotCaptured()) {
      acs = "?";  // not in the bytes read (not root)
    }
    std::string mrrs = f.express_offset ? std::to_string(f.MaxReadRequest()) : "-";
    if (f.express_not_captured) mrrs = "?";
    auto on = paths.find(bdf);
    rows.push_back(
        {bdf, kind, acs, mrrs, Link(f), on == paths.end() ? "-" : JoinNames(on->second)});
  }
  std::string out =
      "\nPCIe (config space: ACS Control of root/downstream ports, MaxReadReq of NIC "
      "PFs):\n";
  if (rows.size() == 1) {
    out += p.unreadable.empty() ? "  (no ports or NIC PFs read)\n" : "";
  } else {
    out += TextTable(rows, "  ");
    out +=
        "  ACS CTL 0x0000 = peer-to-peer goes straight across; '-' = no ACS capability; '?' = "
        "not captured (config space read without root: 64 bytes)\n";
  }
  if (!p.unreadable.empty()) {
    // One example: the reason ("not captured") is usually the same for all.
    const auto& [first, why] = *p.unreadable.begin();
    out += "  config space not read for " + std::to_string(p.unreadable.size()) +
           " function(s), e.g. " + first + ": " + why + "\n";
  }
  return out;
}

}  // namespace provisioner
