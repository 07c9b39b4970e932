#include "modules/railnet/railnet_vf.h"

#include <algorithm>

#include "engine/config/ip.h"
#include "modules/railnet/policy_routing.h"

namespace provisioner {
namespace {

// VF `index`'s netdev when it exists now and stays through this apply: the
// PF keeps its VF count and the VF is on its PF's network driver already.
std::string StableVfNetdev(const NicSpec& nic, const PciFunction& pf, int index) {
  if (!pf.sriov) return "";
  const SriovInfo& s = *pf.sriov;
  if (nic.num_vfs && *nic.num_vfs != s.num_vfs) return "";
  for (const VfInfo& vf : s.vfs) {
    if (vf.vf_index != index) continue;
    if (vf.netdevs.empty() || vf.driver.empty() || vf.driver != VfNetdeviceDriver(pf.driver)) {
      return "";
    }
    return vf.netdevs.front();
  }
  return "";
}

}  // namespace

std::string VfRef(const std::string& pf, int index) { return pf + "#vf" + std::to_string(index); }

std::optional<std::pair<std::string, int>> ParseVfRef(const std::string& text) {
  const size_t hash = text.find("#vf");
  if (hash == std::string::npos || hash == 0 || text.find(':') == std::string::npos) {
    return std::nullopt;
  }
  const std::string digits = text.substr(hash + 3);
  if (digits.empty() || digits.size() > 5 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  const std::string pf = text.substr(0, hash);
  if (pf.find_first_not_of("0123456789abcdef:.") != std::string::npos) return std::nullopt;
  return std::make_pair(pf, std::stoi(digits));
}

bool HasHostNetworkVfs(const NicSpec& nic) {
  return std::any_of(nic.vf_groups.begin(), nic.vf_groups.end(),
                     [](const VfGroupSpec& g) { return !g.addresses.empty(); });
}

void AppendVfRails(const NicSpec& nic, const std::string& nic_path, const PciFunction& pf,
                   const RailWant& rail, const HostFacts& facts,
                   const std::function<void(const std::string&, const std::string&)>& error,
                   std::vector<RailWant>& out) {
  (void)facts;
  long long pref = kDefaultRulePriority;
  if (!rail.rules.empty()) {
    if (auto r = ParseRule(rail.rules.front())) pref = r->pref;
  } else if (nic.routing && nic.routing->priority) {
    pref = *nic.routing->priority;
  }
  // The nic's routes through its gateway (default, routing.routes).
  std::vector<PolicyRoute> via_gateway;
  for (const std::string& text : rail.routes) {
    auto r = ParseRoute(text);
    if (r && !r->via.empty()) via_gateway.push_back(*r);
  }
  for (size_t k = 0; k < nic.vf_groups.size(); ++k) {
    const VfGroupSpec& g = nic.vf_groups[k];
    if (g.addresses.empty()) continue;
    const std::string path = nic_path + ".vfGroups[" + std::to_string(k) + "]";
    // The loader checks the count; a plan from a hand-made DesiredState too.
    if (static_cast<int>(g.addresses.size()) != g.last - g.first + 1) {
      error(path + ".addresses", "one address per VF of range " + g.range);
      continue;
    }
    for (int n = g.first; n <= g.last; ++n) {
      const std::string field = path + ".addresses[" + std::to_string(n - g.first) + "]";
      const std::string text = g.addresses[static_cast<size_t>(n - g.first)];
      auto p = text.find('/') == std::string::npos ? std::nullopt : config::ParseCidr(text);
      if (!p) {
        error(field, "\"" + text + "\" is not an address with a prefix length (172.16.1.71/24)");
        continue;
      }
      RailWant w;
      w.nic = nic.name;
      w.path = path;
      w.pf = pf.pci_address;
      w.netdev = StableVfNetdev(nic, pf, n);
      if (w.netdev.empty()) w.netdev = VfRef(pf.pci_address, n);
      w.lasting_name = w.netdev;
      w.addresses =
          std::vector<std::string>{config::FormatIp(p->address) + "/" + std::to_string(p->length)};
      w.sysctl = rail.sysctl;
      if (p->address.version == 4) {
        w.source = config::FormatIp(p->address);
        w.peer = NeighbourOf(w.source + "/" + std::to_string(p->length));
      }
      if (rail.table && p->address.version == 4) {
        const long long table = *rail.table * kVfTableFactor + n;
        if (table > kMaxTable) {
          error(field, "VF " + std::to_string(n) + "'s table " + std::to_string(table) +
                           " (1000 * the nic's table " + std::to_string(*rail.table) + " + " +
                           std::to_string(n) +
                           ") is above 4294967295: give the nic a lower "
                           "routing.table");
          continue;
        }
        w.table = table;
        w.table_name = rail.table_name + "-vf" + std::to_string(n);
        w.routes.push_back(FormatRoute(PolicyRoute{p->ToString(), "", w.netdev, w.source, true}));
        for (const PolicyRoute& r : via_gateway) {
          if (!p->Contains(*config::ParseIp(r.via))) {
            error(field, "the nic's gateway " + r.via + " is outside " + p->ToString() + ": VF " +
                             std::to_string(n) + " cannot reach it");
            break;
          }
          w.routes.push_back(FormatRoute(PolicyRoute{r.dst, r.via, w.netdev, "", false}));
        }
        w.rules.push_back(FormatRule(PolicyRule{pref, w.source, table}));
      }
      out.push_back(std::move(w));
    }
  }
}

}  // namespace provisioner
