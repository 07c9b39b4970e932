// The canonical text of routes and rules (policy_routing.h), the lookup
// computed from them, and the whole-set edits both backends share.
#include <algorithm>
#include <sstream>

#include "engine/config/ip.h"
#include "modules/railnet/policy_routing.h"

namespace provisioner {
namespace {

std::optional<long long> Number(const std::string& s) {
  if (s.empty() || s.size() > 10) return std::nullopt;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  return std::stoll(s);
}

// "172.16.1.0/24" -> the prefix; "default" -> 0.0.0.0/0; an address -> /32.
std::optional<config::IpPrefix> Prefix(const std::string& text) {
  if (text == "default" || text == "all") return config::ParseCidr("0.0.0.0/0");
  if (text.find('/') == std::string::npos) return config::ParseCidr(text + "/32");
  return config::ParseCidr(text);
}

}  // namespace

std::string FormatRoute(const PolicyRoute& r) {
  std::string out = r.dst;
  if (!r.via.empty()) out += " via " + r.via;
  out += " dev " + r.dev;
  if (r.link_scope) out += " scope link";
  if (!r.src.empty()) out += " src " + r.src;
  return out;
}

std::optional<PolicyRoute> ParseRoute(const std::string& text) {
  std::istringstream in(text);
  PolicyRoute r;
  if (!(in >> r.dst)) return std::nullopt;
  if (r.dst != "default") {
    auto p = config::ParseCidr(r.dst);
    if (!p || p->address.version != 4) return std::nullopt;
    r.dst = p->length == 0 ? "default" : p->ToString();
  }
  std::string key, value;
  while (in >> key >> value) {
    if (key == "via" && config::ParseIp(value)) {
      r.via = value;
    } else if (key == "dev") {
      r.dev = value;
    } else if (key == "src" && config::ParseIp(value)) {
      r.src = value;
    } else if (key == "scope" && value == "link") {
      r.link_scope = true;
    } else {
      return std::nullopt;
    }
  }
  if (r.dev.empty() || !in.eof()) return std::nullopt;
  return r;
}

std::string FormatRule(const PolicyRule& r) {
  return "pref " + std::to_string(r.pref) + " from " + r.from + " lookup " +
         std::to_string(r.table);
}

std::optional<PolicyRule> ParseRule(const std::string& text) {
  std::istringstream in(text);
  std::string k1, v1, k2, v2, k3, v3, rest;
  if (!(in >> k1 >> v1 >> k2 >> v2 >> k3 >> v3) || (in >> rest)) return std::nullopt;
  if (k1 != "pref" || k2 != "from" || k3 != "lookup") return std::nullopt;
  PolicyRule r;
  auto pref = Number(v1);
  auto table = Number(v3);
  if (!pref || !table || !Prefix(v2)) return std::nullopt;
  r.pref = *pref;
  r.table = *table;
  r.from = v2;
  return r;
}

std::string ComputeLookup(const std::vector<PolicyRule>& rules,
                          const std::map<long long, std::vector<PolicyRoute>>& tables,
                          const std::string& dst, const std::string& src) {
  auto d = config::ParseIp(dst);
  auto s = config::ParseIp(src);
  if (!d || !s) return "";
  std::vector<PolicyRule> order = rules;
  order.push_back(PolicyRule{32766, "all", kMainTable});
  std::stable_sort(order.begin(), order.end(),
                   [](const PolicyRule& a, const PolicyRule& b) { return a.pref < b.pref; });
  for (const PolicyRule& rule : order) {
    auto from = Prefix(rule.from);
    if (!from || !from->Contains(*s)) continue;
    auto t = tables.find(rule.table);
    if (t == tables.end()) continue;
    int best = -1;
    std::string dev;
    for (const PolicyRoute& r : t->second) {
      auto p = Prefix(r.dst);
      if (p && p->Contains(*d) && p->length > best) {
        best = p->length;
        dev = r.dev;
      }
    }
    if (best >= 0) return dev;
  }
  return "";
}

std::string RenderRouteCapture(const std::map<long long, std::vector<std::string>>& by_table) {
  std::string out;
  for (const auto& [table, list] : by_table) {
    for (const std::string& r : list) out += "table " + std::to_string(table) + " " + r + "\n";
  }
  return out;
}

std::map<long long, std::vector<std::string>> ParseRouteCapture(const std::string& text) {
  std::map<long long, std::vector<std::string>> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    std::string word, number;
    if (!(l >> word >> number) || word != "table" || !Number(number)) continue;
    std::string rest;
    std::getline(l, rest);
    if (auto r = ParseRoute(rest)) out[*Number(number)].push_back(FormatRoute(*r));
  }
  for (auto& [table, list] : out) std::sort(list.begin(), list.end());
  return out;
}

std::vector<std::string> RulesOfTable(const std::vector<std::string>& all, long long table) {
  std::vector<std::string> out;
  for (const std::string& text : all) {
    auto r = ParseRule(text);
    if (r && r->table == table) out.push_back(text);
  }
  return out;
}

Status SetTableRoutes(PolicyRoutingBackend& b, long long table,
                      const std::vector<std::string>& want) {
  ASSIGN_OR_RETURN(std::vector<std::string> now, b.Routes(table));
  for (const std::string& r : now) {
    if (std::find(want.begin(), want.end(), r) == want.end()) RETURN_IF_ERROR(b.RemoveRoute(table, r));
  }
  for (const std::string& r : want) {
    if (std::find(now.begin(), now.end(), r) == now.end()) RETURN_IF_ERROR(b.AddRoute(table, r));
  }
  return OkStatus();
}

Status SetTableRules(PolicyRoutingBackend& b, long long table,
                     const std::vector<std::string>& want) {
  ASSIGN_OR_RETURN(std::vector<std::string> all, b.Rules());
  const std::vector<std::string> now = RulesOfTable(all, table);
  for (const std::string& r : now) {
    if (std::find(want.begin(), want.end(), r) == want.end()) RETURN_IF_ERROR(b.RemoveRule(r));
  }
  for (const std::string& r : want) {
    if (std::find(now.begin(), now.end(), r) == now.end()) RETURN_IF_ERROR(b.AddRule(r));
  }
  return OkStatus();
}

}  // namespace provisioner
