#include "modules/railnet/railnet_module.h"

#include <algorithm>
#include <cerrno>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/base/strings.h"
#include "engine/module/managed_file.h"
#include "engine/module/registry.h"
#include "engine/output/facts_output.h"
#include "modules/link/link_backend.h"
#include "modules/railnet/network_stack.h"
#include "modules/railnet/persist_planner.h"
#include "modules/railnet/railnet_checks.h"
#include "modules/railnet/railnet_planner.h"
#include "modules/railnet/railnet_vf.h"
#include "modules/railnet/railnet_vf_apply.h"
#include "spdlog/spdlog.h"

namespace provisioner {
namespace {

std::string ConfPath(const std::string& ifname, const std::string& key) {
  return "/proc/sys/net/ipv4/conf/" + ifname + "/" + key;
}

bool ValidKey(const std::string& k) {
  return !k.empty() && k.size() <= 64 &&
         std::all_of(k.begin(), k.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
         });
}

std::optional<long long> ParseLong(const std::string& text) {
  try {
    size_t used = 0;
    long long v = std::stoll(text, &used, 10);
    if (used != text.size()) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<long long> TableOf(const std::string& target) {
  if (target.size() < 6 || target.compare(0, 5, "table") != 0) return std::nullopt;
  return ParseLong(target.substr(5));
}

std::vector<std::string> StringList(const nlohmann::json& list) {
  std::vector<std::string> out;
  if (!list.is_array()) return out;
  for (const auto& e : list) out.push_back(e.get<std::string>());
  return out;
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

Status CheckStrings(const Change& c, const nlohmann::json& v, bool (*ok)(const std::string&)) {
  if (v.is_null()) return OkStatus();
  if (!v.is_array()) return InvalidArgumentError(c.id + ": must be a list");
  for (const auto& e : v) {
    if (!e.is_string() || !ok(e.get<std::string>())) {
      return InvalidArgumentError(c.id + ": " + e.dump() + " is not valid here");
    }
  }
  return OkStatus();
}

// Any global address on a NIC netdev: discover shows the section then.
bool AnyAddress(const RailnetFacts& r) {
  return std::any_of(r.addresses.begin(), r.addresses.end(),
                     [](const auto& e) { return !e.second.empty(); });
}

bool IsCidr(const std::string& s) { return CanonicalCidr(s).has_value(); }
bool IsRoute(const std::string& s) { return ParseRoute(s).has_value(); }
bool IsRule(const std::string& s) { return ParseRule(s).has_value(); }

// A netdev's name, or a host-network VF's reference (railnet_vf.h).
bool IsNetdevTarget(const std::string& target) {
  return IsValidIfname(target) || ParseVfRef(target).has_value();
}

// The module's files (issue 39 item 2: read also when no rail is wanted, so
// that a plan removes them).
void ReadRailFiles(const HostFs& fs, RailnetFacts& r) {
  if (auto t = fs.ReadFile(kRtTablesFile); t.ok()) r.rt_tables_file = *t;
  if (auto s = fs.ReadFile(kRailSysctlFile); s.ok()) r.sysctl_file = *s;
}

std::string Show(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

std::unique_ptr<NetdevAddressBackend> RailnetModule::Addresses(HostFs& fs) const {
  if (options_.addresses) return options_.addresses(fs);
  return NewNetdevAddressBackend(fs, kRailAddressCapture);
}

std::unique_ptr<PolicyRoutingBackend> RailnetModule::Routing(HostFs& fs) const {
  if (options_.routing) return options_.routing(fs);
  return NewPolicyRoutingBackend(fs);
}

Status RailnetModule::Discover(HostContext& ctx, HostFacts& facts) {
  facts.railnet = RailnetFacts();
  RailnetFacts& r = facts.railnet;
  r.discovered = true;
  HostFs& fs = *ctx.fs;
  ReadRailFiles(fs, r);
  if (ctx.plan_for != nullptr && !WantsRailnet(*ctx.plan_for)) return OkStatus();
  std::unique_ptr<NetdevAddressBackend> addresses = Addresses(fs);
  std::unique_ptr<PolicyRoutingBackend> routing = Routing(fs);
  std::set<std::string> keys = {"accept_local"};
  for (const auto& [k, v] : RailSysctlDefaults()) keys.insert(k);
  std::set<long long> tables;
  std::set<std::string> named;  // current and lasting (names.netdev) netdev names
  std::set<std::string> vf_netdevs;  // of host-network VF groups, by name
  if (ctx.plan_for != nullptr) {
    for (const RailWant& w : WantedRails(*ctx.plan_for, facts, nullptr)) {
      for (const auto& [k, v] : w.sysctl) keys.insert(k);
      if (w.table) tables.insert(*w.table);
      named.insert(w.lasting_name);
      if (!ParseVfRef(w.netdev)) vf_netdevs.insert(w.netdev);
    }
  }
  std::set<std::string> ethernet;
  for (const PciFunction& f : facts.pci) {
    if (f.IsVf() || !f.IsNetwork()) continue;
    for (const std::string& n : f.netdevs) {
      auto type = fs.ReadAttr("/sys/class/net/" + n + "/type");
      if (!type.ok() || *type != "1") continue;  // ARPHRD_ETHER only
      ethernet.insert(n);
      if (auto a = addresses->Read(n); a.ok()) {
        r.addresses[n] = *a;
      } else {
        spdlog::debug("railnet {} addresses: {}", n, a.status().message());
      }
      for (const std::string& k : keys) {
        auto v = fs.ReadAttr(ConfPath(n, k));
        if (!v.ok()) continue;
        if (auto x = ParseLong(*v)) r.sysctls[n][k] = *x;
      }
    }
  }
  if (ctx.plan_for == nullptr && (r.rt_tables_file || r.sysctl_file)) {
    // Discover and doctor on a host with rails: the VF netdevs too (a
    // host-network VF group's, railnet_vf.h), only there to keep discover
    // of other hosts as cheap as it was.
    for (const PciFunction& f : facts.pci) {
      if (!f.IsVf()) continue;
      for (const std::string& n : f.netdevs) {
        auto type = fs.ReadAttr("/sys/class/net/" + n + "/type");
        if (type.ok() && *type == "1") vf_netdevs.insert(n);
      }
    }
  }
  for (const std::string& n : vf_netdevs) {
    if (ethernet.count(n)) continue;
    if (auto a = addresses->Read(n); a.ok()) r.addresses[n] = *a;
    for (const std::string& k : keys) {
      auto v = fs.ReadAttr(ConfPath(n, k));
      if (!v.ok()) continue;
      if (auto x = ParseLong(*v)) r.sysctls[n][k] = *x;
    }
  }
  named.insert(ethernet.begin(), ethernet.end());
  DetectNetworkStacks(fs, named, r);
  if (auto rules = routing->Rules(); rules.ok()) {
    r.rules = *rules;
    r.rules_read = true;
    for (const std::string& text : r.rules) {
      auto p = ParseRule(text);
      if (p && p->table != 253 && p->table != 254 && p->table != 255) tables.insert(p->table);
    }
  } else {
    spdlog::debug("railnet rules: {}", rules.status().message());
  }
  if (r.rt_tables_file) {
    const std::string* t = &*r.rt_tables_file;
    // Our tables, also when no rule looks one up any more (doctor says so).
    std::istringstream in(*t);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      if (auto n = ParseLong(line.substr(0, line.find('\t')))) tables.insert(*n);
    }
  }
  for (long long t : tables) {
    if (auto routes = routing->Routes(t); routes.ok()) r.routes[t] = *routes;
  }
  if (ctx.plan_for == nullptr) {
    // Doctor: where a neighbour of each rail address is routed from it.
    for (const auto& [n, list] : r.addresses) {
      for (const std::string& a : list) {
        const std::string peer = NeighbourOf(a);
        if (peer.empty()) continue;
        const std::string src = a.substr(0, a.find('/'));
        auto dev = routing->Lookup(peer, src);
        r.lookups[peer + " from " + src] =
            dev.ok() ? *dev : "error: " + std::string(dev.status().message());
      }
    }
  }
  return OkStatus();
}

void RailnetModule::Plan(const DesiredState& desired, const HostFacts& facts,
                         PlanSink& sink) const {
  PlanRailnet(desired, facts, sink);
}

Status RailnetModule::CheckChange(const Change& c) const {
  if (c.module != kRailnetModule) return InvalidArgumentError("module railnet cannot apply " + c.id);
  if (c.attribute == kRailAddresses) {
    if (!IsNetdevTarget(c.target)) return InvalidArgumentError(c.id + ": bad interface name");
    return CheckStrings(c, c.after, IsCidr);
  }
  if (c.attribute == kRailSysctl) {
    if (!IsNetdevTarget(c.target)) return InvalidArgumentError(c.id + ": bad interface name");
    if (!c.after.is_object()) return InvalidArgumentError(c.id + ": sysctl must be a map");
    for (const auto& [k, v] : c.after.items()) {
      if (!ValidKey(k) || !(v.is_null() || v.is_number_integer())) {
        return InvalidArgumentError(c.id + ": bad sysctl " + k + "=" + v.dump());
      }
    }
    return OkStatus();
  }
  if (c.attribute == kRailRoutes || c.attribute == kRailRules) {
    if (!TableOf(c.target)) return InvalidArgumentError(c.id + ": target must be table<N>");
    return CheckStrings(c, c.after, c.attribute == kRailRoutes ? IsRoute : IsRule);
  }
  if (c.attribute == kRailFile) {
    const std::string path = c.detail.value("path", "");
    if (path != kRtTablesFile && path != kRailSysctlFile && !IsPersistPath(path)) {
      return InvalidArgumentError(c.id + ": not a file of module railnet: " + path);
    }
    if (!c.after.is_null() && !c.after.is_string()) {
      return InvalidArgumentError(c.id + ": file content must be text");
    }
    return OkStatus();
  }
  return InvalidArgumentError("module railnet has no attribute " + c.attribute + " (" + c.id + ")");
}

Status RailnetModule::Apply(const Change& planned, HostContext& ctx) {
  RETURN_IF_ERROR(CheckChange(planned));
  HostFs& fs = *ctx.fs;
  ASSIGN_OR_RETURN(std::optional<Change> resolved, ResolveVfRefs(planned, fs));
  if (!resolved) return OkStatus();  // a VF gone, nothing wanted on it
  const Change& change = *resolved;
  const nlohmann::json& after = change.after;
  if (change.attribute == kRailFile) {
    const std::string path = change.detail["path"].get<std::string>();
    std::optional<std::string> content;
    if (after.is_string()) content = after.get<std::string>();
    return WriteManagedFile(fs, change, path, content, change.detail.value("mode", 0644));
  }
  if (change.attribute == kRailAddresses) {
    return SetAddresses(*Addresses(fs), change.target, Sorted(StringList(after)));
  }
  if (change.attribute == kRailSysctl) {
    for (const auto& [k, v] : after.items()) {
      if (v.is_null()) continue;  // not read before: left as it is
      const std::string path = ConfPath(change.target, k);
      if (ctx.progress) ctx.progress->Step(path + " <- " + v.dump());
      RETURN_IF_ERROR(fs.WriteAttr(path, v.dump() + "\n").WithContext("set " + path));
    }
    return OkStatus();
  }
  const long long table = *TableOf(change.target);
  std::unique_ptr<PolicyRoutingBackend> routing = Routing(fs);
  if (change.attribute == kRailRoutes) {
    return SetTableRoutes(*routing, table, StringList(after));
  }
  return SetTableRules(*routing, table, StringList(after));
}

Status RailnetModule::Verify(const Change& planned, HostContext& ctx) {
  RETURN_IF_ERROR(CheckChange(planned));
  HostFs& fs = *ctx.fs;
  ASSIGN_OR_RETURN(std::optional<Change> resolved, ResolveVfRefs(planned, fs));
  if (!resolved) return OkStatus();
  const Change& change = *resolved;
  const nlohmann::json& after = change.after;
  const std::string label =
      (change.field_path.empty() ? change.id : change.field_path) + " (" + change.target + ")";
  auto mismatch = [&](const std::string& now) {
    return FailedPreconditionError(label + ": desired " + Show(after) + ", current " + now);
  };
  if (change.attribute == kRailFile) {
    const std::string path = change.detail["path"].get<std::string>();
    if (RestoresManagedFile(change, path)) return VerifyManagedFileRestored(fs, change, path);
    auto now = fs.ReadFile(path);
    if (after.is_null()) {
      if (now.ok()) return mismatch(path + " present");
      return OkStatus();
    }
    if (!now.ok()) return now.status().WithContext(label);
    if (*now != after.get<std::string>()) return mismatch(path + " differs");
    return OkStatus();
  }
  if (change.attribute == kRailAddresses) {
    ASSIGN_OR_RETURN(std::vector<std::string> now, Addresses(fs)->Read(change.target));
    if (now != Sorted(StringList(after))) return mismatch(nlohmann::json(now).dump());
    return OkStatus();
  }
  if (change.attribute == kRailSysctl) {
    for (const auto& [k, v] : after.items()) {
      if (v.is_null()) continue;
      ASSIGN_OR_RETURN(std::string now, fs.ReadAttr(ConfPath(change.target, k)));
      if (ParseLong(now) != v.get<long long>()) return mismatch(k + "=" + now);
    }
    return OkStatus();
  }
  const long long table = *TableOf(change.target);
  std::unique_ptr<PolicyRoutingBackend> routing = Routing(fs);
  std::vector<std::string> now;
  if (change.attribute == kRailRoutes) {
    ASSIGN_OR_RETURN(now, routing->Routes(table));
  } else {
    ASSIGN_OR_RETURN(std::vector<std::string> all, routing->Rules());
    now = RulesOfTable(all, table);
  }
  if (Sorted(now) != Sorted(StringList(after))) return mismatch(nlohmann::json(now).dump());
  return OkStatus();
}

void RailnetModule::Check(const DesiredState* desired, const HostFacts& facts,
                          CheckSink& sink) const {
  if (desired != nullptr) CheckRailnet(*desired, facts, sink);
}

// discover -o json: "railnet": {addresses: {<netdev>: [..]}, sysctls:
// {<netdev>: {key: value}}, tables: {"<n>": [routes]}, rules: [..]}.
void RailnetModule::RenderFactsJson(const HostFacts& facts, FactsJson& out) const {
  const RailnetFacts& r = facts.railnet;
  if (!r.discovered || (!AnyAddress(r) && r.rules.empty() && r.routes.empty())) return;
  nlohmann::json j = nlohmann::json::object();
  nlohmann::json addresses = nlohmann::json::object();
  for (const auto& [n, list] : r.addresses) {
    if (!list.empty()) addresses[n] = list;
  }
  j["addresses"] = addresses;
  j["sysctls"] = r.sysctls;
  nlohmann::json tables = nlohmann::json::object();
  for (const auto& [t, routes] : r.routes) tables[std::to_string(t)] = routes;
  j["tables"] = tables;
  if (r.rules_read) j["rules"] = r.rules;
  if (!r.lookups.empty()) j["lookups"] = r.lookups;
  j["networkStacks"] = r.network_stacks;
  if (!r.configured_by.empty()) j["configuredBy"] = r.configured_by;
  out.doc()["railnet"] = j;
}

std::string RailnetModule::RenderFactsTable(const HostFacts& facts) const {
  const RailnetFacts& r = facts.railnet;
  if (!r.discovered || (!AnyAddress(r) && r.rules.empty())) return "";
  std::vector<std::vector<std::string>> rows = {{"NETDEV", "ADDRESSES", "SYSCTLS"}};
  for (const auto& [n, list] : r.addresses) {
    if (list.empty()) continue;
    std::string sysctls;
    if (auto s = r.sysctls.find(n); s != r.sysctls.end()) {
      for (const auto& [k, v] : s->second) {
        sysctls += (sysctls.empty() ? "" : " ") + k + "=" + std::to_string(v);
      }
    }
    rows.push_back({n, JoinNames(list, "-"), sysctls.empty() ? "-" : sysctls});
  }
  std::string out = "\nRail addresses:\n" + TextTable(rows, "  ");
  if (!r.rules.empty()) {
    out += "\nPolicy rules:\n";
    for (const std::string& rule : r.rules) {
      out += "  " + rule + "\n";
      auto p = ParseRule(rule);
      if (!p) continue;
      auto t = r.routes.find(p->table);
      if (t == r.routes.end()) continue;
      for (const std::string& route : t->second) out += "    " + route + "\n";
    }
  }
  return out;
}

// After link (netdevs up), roce, rdma (the GID tables doctor reads),
// topology (nearGpu selectors) and eswitch (representors are no rail).
PROVISIONER_REGISTER_MODULE("railnet", RailnetModule, "link", "roce", "rdma", "topology",
                            "eswitch")

}  // namespace provisioner
