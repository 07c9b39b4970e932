#include "modules/railnet/railnet_planner.h"

#include <algorithm>
#include <set>
#include <utility>

#include "engine/config/ip.h"
#include "engine/model/selector.h"
#include "engine/module/managed_file.h"
#include "modules/railnet/persist_planner.h"
#include "modules/railnet/policy_routing.h"
#include "modules/railnet/railnet_vf.h"
#include "nlohmann/json.hpp"

namespace provisioner {
namespace {

bool ValidSysctlKey(const std::string& k) {
  if (k.empty() || k.size() > 64 || k[0] < 'a' || k[0] > 'z') return false;
  for (char c : k) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

bool AsksRailnet(const NicSpec& nic) {
  return nic.addresses.has_value() || nic.routing.has_value() || !nic.sysctl.empty() ||
         HasHostNetworkVfs(nic);
}

// The PF's own Ethernet netdev (not a switchdev representor), or "".
std::string PfNetdev(const PciFunction& pf, const HostFacts& facts) {
  std::set<std::string> reps;
  if (auto e = facts.eswitch.pfs.find(pf.pci_address); e != facts.eswitch.pfs.end()) {
    for (const auto& [vf, name] : e->second.representors) reps.insert(name);
  }
  for (const std::string& n : pf.netdevs) {
    if (!reps.count(n)) return n;
  }
  return "";
}

int RailNumber(const DesiredState& desired, const std::string& path) {
  for (const RailOrigin& o : desired.rail_origins) {
    if (o.path == path) return o.rail;
  }
  return 0;
}

// One of the module's files: `want` its text, nullopt when no rail wants it
// any more: then our file (with our header) is removed, someone else's at
// that path is left alone. Planned when it differs from `now`; the engine
// captures the file first and a rollback restores it byte for byte.
void PlanRailFile(const char* target, const char* path, const std::optional<std::string>& now,
                  const std::optional<std::string>& want, const std::string& reason,
                  PlanSink& sink) {
  if (now == want) return;
  if (!want && (!now || !WrittenByProvisioner(*now))) return;
  Change c = MakeChange(
      kRailnetModule, target, kRailFile, now ? nlohmann::json(*now) : nlohmann::json(nullptr),
      want ? nlohmann::json(*want) : nlohmann::json(nullptr), Disruption::kLive, kPhaseRails,
      want ? reason : "no rail wants it any more: the file goes", "spec.nics");
  c.resource = std::string("file:") + path;
  c.detail["path"] = path;
  DeclareManagedFile(c, path, now, "spec.nics", sink);
  sink.AddChange(std::move(c));
}

}  // namespace

const std::map<std::string, long long>& RailSysctlDefaults() {
  static const std::map<std::string, long long> kDefaults = {
      {"arp_announce", 2}, {"arp_ignore", 1}, {"rp_filter", 2}};
  return kDefaults;
}

std::string NeighbourOf(const std::string& cidr) {
  auto p = config::ParseCidr(cidr);
  if (!p || p->address.version != 4 || p->length > 30) return "";
  config::IpAddress n = p->Network();
  n.bytes[3] = static_cast<uint8_t>(n.bytes[3] + 1);
  if (config::CompareIp(n, p->address) == 0) n.bytes[3] = static_cast<uint8_t>(n.bytes[3] + 1);
  return config::FormatIp(n);
}

bool WantsRailnet(const DesiredState& desired) {
  return std::any_of(desired.nics.begin(), desired.nics.end(), AsksRailnet);
}

std::vector<RailWant> WantedRails(const DesiredState& desired, const HostFacts& facts,
                                  PlanSink* sink) {
  auto error = [&](const std::string& path, const std::string& message) {
    if (sink != nullptr) sink->Error(path, message);
  };
  size_t with_addresses = 0;
  for (const NicSpec& nic : desired.nics) {
    if (nic.addresses && !nic.addresses->empty()) ++with_addresses;
  }
  std::vector<RailWant> out;
  std::set<long long> tables;
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    const NicSpec& nic = desired.nics[i];
    if (!AsksRailnet(nic)) continue;
    const std::string path = DesiredState::NicPath(i);
    std::vector<const PciFunction*> pfs = SelectPfs(nic, facts);
    if (pfs.empty()) continue;  // reported by the pci module
    if (pfs.size() > 1 && ((nic.addresses && !nic.addresses->empty()) || HasHostNetworkVfs(nic))) {
      error(path + (HasHostNetworkVfs(nic) ? ".vfGroups" : ".addresses"),
            "selects " + std::to_string(pfs.size()) +
                " PFs: addresses belong to one netdev; select one PF");
      continue;
    }
    const PciFunction& pf = *pfs.front();
    RailWant w;
    w.nic = nic.name;
    w.path = path;
    w.pf = pf.pci_address;
    w.netdev = PfNetdev(pf, facts);
    if (w.netdev.empty()) {
      error(path, pf.pci_address + " has no netdev (no net/ in its sysfs directory)");
      continue;
    }
    w.lasting_name = nic.names && nic.names->netdev ? *nic.names->netdev : w.netdev;
    std::vector<config::IpPrefix> v4;
    if (nic.addresses) {
      std::vector<std::string> list;
      for (size_t k = 0; k < nic.addresses->size(); ++k) {
        const std::string& a = (*nic.addresses)[k];
        auto p = a.find('/') == std::string::npos ? std::nullopt : config::ParseCidr(a);
        if (!p) {
          error(path + ".addresses[" + std::to_string(k) + "]",
                "\"" + a + "\" is not an address with a prefix length (172.16.1.7/24)");
          continue;
        }
        list.push_back(config::FormatIp(p->address) + "/" + std::to_string(p->length));
        if (p->address.version == 4) v4.push_back(*p);
      }
      std::sort(list.begin(), list.end());
      w.addresses = list;
    }
    const int rail = RailNumber(desired, path);
    if (nic.routing && nic.routing->table) {
      w.table = *nic.routing->table;
    } else if (rail > 0 && !v4.empty()) {
      w.table = kDefaultRailTableBase + rail;
    } else if (nic.routing) {
      error(path + ".routing.table", "give the table number (1..4294967295, not 253-255)");
    }
    if (w.table && (*w.table == 253 || *w.table == 254 || *w.table == 255 || *w.table == 0)) {
      error(path + ".routing.table", std::to_string(*w.table) +
                                         " is the kernel's default, main or local table");
      w.table.reset();
    }
    if (w.table && !tables.insert(*w.table).second) {
      error(path + ".routing.table",
            "table " + std::to_string(*w.table) + " is another nic's: one table per rail");
      w.table.reset();
    }
    std::optional<std::string> gateway = nic.routing ? nic.routing->gateway : std::nullopt;
    if (gateway) {
      auto g = config::ParseIp(*gateway);
      bool inside = false;
      for (const auto& p : v4) inside = inside || (g && p.Contains(*g));
      if (!inside) {
        error(path + ".routing.gateway",
              "\"" + *gateway + "\" is not inside a subnet of the nic's IPv4 addresses");
        gateway.reset();
      }
    }
    if (w.table) {
      w.table_name = nic.routing && nic.routing->table_name ? *nic.routing->table_name : nic.name;
      const int pref = nic.routing && nic.routing->priority ? *nic.routing->priority
                                                             : kDefaultRulePriority;
      for (const auto& p : v4) {
        const std::string addr = config::FormatIp(p.address);
        w.routes.push_back(FormatRoute(PolicyRoute{p.ToString(), "", w.netdev, addr, true}));
        w.rules.push_back(FormatRule(PolicyRule{pref, addr, *w.table}));
      }
      if (gateway) {
        w.routes.push_back(FormatRoute(PolicyRoute{"default", *gateway, w.netdev, "", false}));
      }
      const std::vector<std::string> extra = nic.routing ? nic.routing->routes
                                                         : std::vector<std::string>{};
      for (size_t k = 0; k < extra.size(); ++k) {
        const std::string field = path + ".routing.routes[" + std::to_string(k) + "]";
        auto p = config::ParseCidr(extra[k]);
        if (!p || p->address.version != 4) {
          error(field, "\"" + extra[k] + "\" is not an IPv4 subnet (10.0.0.0/8)");
        } else if (!gateway) {
          error(field, "a route needs routing.gateway (the rail's next hop)");
        } else {
          w.routes.push_back(
              FormatRoute(PolicyRoute{p->ToString(), *gateway, w.netdev, "", false}));
        }
      }
    }
    if (!v4.empty()) {
      w.source = config::FormatIp(v4.front().address);
      w.peer = NeighbourOf(w.source + "/" + std::to_string(v4.front().length));
    }
    if (with_addresses >= 2 && w.addresses && !w.addresses->empty()) w.sysctl = RailSysctlDefaults();
    for (const auto& [key, value] : nic.sysctl) {
      if (!ValidSysctlKey(key)) {
        error(path + ".sysctl." + key, "not a net.ipv4.conf key (lower case, digits, _)");
        continue;
      }
      w.sysctl[key] = value;
    }
    out.push_back(std::move(w));
    AppendVfRails(nic, path, pf, RailWant(out.back()), facts, error, out);
  }
  return out;
}

std::string RenderRtTables(const std::vector<RailWant>& rails) {
  std::string out =
      "# written by provisioner (module railnet): the rails' routing tables.\n"
      "# iproute2 reads rt_tables.d/*.conf for `ip route show table <name>`.\n";
  for (const RailWant& w : rails) {
    if (w.table) out += std::to_string(*w.table) + "\t" + w.table_name + "\n";
  }
  return out;
}

std::string RenderSysctlConf(const std::vector<RailWant>& rails) {
  std::string out =
      "# written by provisioner (module railnet): ARP and reverse-path settings\n"
      "# of the rail netdevs, by their lasting names.\n";
  for (const RailWant& w : rails) {
    for (const auto& [key, value] : w.sysctl) {
      out += "net.ipv4.conf." + w.lasting_name + "." + key + " = " + std::to_string(value) + "\n";
    }
  }
  return out;
}

void PlanRailnet(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) {
  const std::vector<RailWant> rails = WantedRails(desired, facts, &sink);
  const RailnetFacts& now = facts.railnet;
  if (rails.empty()) {
    // Issue 39 item 2: no rail left, our files go (someone else's stay).
    PlanRailFile("rt_tables", kRtTablesFile, now.rt_tables_file, std::nullopt, "", sink);
    PlanRailFile("sysctl.d", kRailSysctlFile, now.sysctl_file, std::nullopt, "", sink);
    return;
  }
  auto add = [&](const std::string& target, const char* attribute, nlohmann::json before,
                 nlohmann::json after, const std::string& reason, const std::string& field,
                 const std::string& pf) -> Change& {
    Change c = MakeChange(kRailnetModule, target, attribute, std::move(before), std::move(after),
                          Disruption::kLive, kPhaseRails, reason, field);
    c.resource = pf.empty() ? "" : "pf:" + pf;
    sink.AddChange(std::move(c));
    return sink.changes().back();
  };
  for (const RailWant& w : rails) {
    if (!w.addresses) continue;
    auto it = now.addresses.find(w.netdev);
    const std::vector<std::string> have =
        it != now.addresses.end() ? it->second : std::vector<std::string>{};
    if (have != *w.addresses) {
      Change& c = add(w.netdev, kRailAddresses, have, *w.addresses,
                      "nic " + w.nic + " wants these addresses", w.path + ".addresses", w.pf);
      c.detail["nic"] = w.nic;
    }
  }
  for (const RailWant& w : rails) {
    if (w.sysctl.empty()) continue;
    nlohmann::json before = nlohmann::json::object();
    bool same = true;
    auto it = now.sysctls.find(w.netdev);
    for (const auto& [key, value] : w.sysctl) {
      std::optional<long long> v;
      if (it != now.sysctls.end()) {
        if (auto k = it->second.find(key); k != it->second.end()) v = k->second;
      }
      before[key] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
      same = same && v == value;
    }
    if (!same) {
      add(w.netdev, kRailSysctl, before, w.sysctl,
          "nic " + w.nic + ": ARP and reverse-path settings of a rail", w.path + ".sysctl", w.pf);
    }
  }
  const bool any_table = std::any_of(rails.begin(), rails.end(),
                                     [](const RailWant& w) { return w.table.has_value(); });
  PlanRailFile("rt_tables", kRtTablesFile, now.rt_tables_file,
               any_table ? std::optional<std::string>(RenderRtTables(rails)) : std::nullopt,
               "names of the rails' routing tables", sink);
  for (const RailWant& w : rails) {
    if (!w.table) continue;
    const std::string target = "table" + std::to_string(*w.table);
    auto r = now.routes.find(*w.table);
    std::vector<std::string> have =
        r != now.routes.end() ? r->second : std::vector<std::string>{};
    std::vector<std::string> want = w.routes;
    std::vector<std::string> sorted = want;
    std::sort(sorted.begin(), sorted.end());
    if (have != sorted) {
      Change& c = add(target, kRailRoutes, have, want,
                      "nic " + w.nic + ": replies from its addresses leave by " + w.netdev,
                      w.path + ".routing", w.pf);
      c.detail["table"] = *w.table;
    }
    std::vector<std::string> rules_now = RulesOfTable(now.rules, *w.table);
    std::vector<std::string> rules_sorted = w.rules;
    std::sort(rules_now.begin(), rules_now.end());
    std::sort(rules_sorted.begin(), rules_sorted.end());
    if (rules_now != rules_sorted) {
      Change& c = add(target, kRailRules, rules_now, w.rules,
                      "nic " + w.nic + ": traffic from its addresses looks up table " +
                          std::to_string(*w.table),
                      w.path + ".routing", w.pf);
      c.detail["table"] = *w.table;
    }
  }
  const bool any_sysctl = std::any_of(rails.begin(), rails.end(),
                                      [](const RailWant& w) { return !w.sysctl.empty(); });
  const size_t before = sink.changes().size();
  PlanRailFile("sysctl.d", kRailSysctlFile, now.sysctl_file,
               any_sysctl ? std::optional<std::string>(RenderSysctlConf(rails)) : std::nullopt,
               "the rails' sysctls at every boot", sink);
  // Keyed by VF netdevs this apply creates: after every change before it
  // (their PFs' numVfs, binding, links), as a barrier.
  const bool names_vfs = std::any_of(rails.begin(), rails.end(), [](const RailWant& w) {
    return !w.sysctl.empty() && ParseVfRef(w.netdev);
  });
  if (names_vfs && sink.changes().size() > before) sink.changes().back().resource.clear();
  PlanRailPersistence(desired, rails, now, sink);
}

}  // namespace provisioner
