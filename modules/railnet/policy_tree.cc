// The tree backend of policy_routing.h: the capture files under the root.
#include <algorithm>
#include <cerrno>

#include "engine/config/ip.h"
#include "modules/link/address_backend.h"
#include "modules/railnet/policy_routing.h"

namespace provisioner {
namespace {

class Tree : public PolicyRoutingBackend {
 public:
  explicit Tree(HostFs& fs) : fs_(fs) {}
  std::string Name() const override { return "tree"; }

  StatusOr<std::vector<std::string>> Routes(long long table) override {
    ASSIGN_OR_RETURN(auto all, LoadRoutes());
    return all[table];
  }
  Status AddRoute(long long table, const std::string& route) override {
    return EditRoute(table, route, true);
  }
  Status RemoveRoute(long long table, const std::string& route) override {
    return EditRoute(table, route, false);
  }
  StatusOr<std::vector<std::string>> Rules() override { return LoadRules(); }
  Status AddRule(const std::string& rule) override { return EditRule(rule, true); }
  Status RemoveRule(const std::string& rule) override { return EditRule(rule, false); }

  StatusOr<std::string> Lookup(const std::string& dst, const std::string& src) override {
    ASSIGN_OR_RETURN(auto routes, LoadRoutes());
    ASSIGN_OR_RETURN(auto rule_text, LoadRules());
    std::map<long long, std::vector<PolicyRoute>> tables;
    for (const auto& [table, list] : routes) {
      for (const std::string& r : list) tables[table].push_back(*ParseRoute(r));
    }
    // main: the connected route of every address the tree records.
    ASSIGN_OR_RETURN(std::string addresses, Read(kRailAddressCapture));
    for (const auto& [ifname, list] : ParseAddressCapture(addresses)) {
      for (const std::string& a : list) {
        auto p = config::ParseCidr(a);
        if (!p || p->address.version != 4) continue;
        tables[kMainTable].push_back(
            PolicyRoute{p->ToString(), "", ifname, config::FormatIp(p->address), true});
      }
    }
    std::vector<PolicyRule> rules;
    for (const std::string& r : rule_text) rules.push_back(*ParseRule(r));
    return ComputeLookup(rules, tables, dst, src);
  }

 private:
  StatusOr<std::string> Read(const char* path) const {
    auto text = fs_.ReadFile(path);
    if (!text.ok() && text.status().err() == ENOENT) return std::string();
    return text;
  }
  StatusOr<std::map<long long, std::vector<std::string>>> LoadRoutes() const {
    ASSIGN_OR_RETURN(std::string text, Read(kRouteCapture));
    return ParseRouteCapture(text);
  }
  StatusOr<std::vector<std::string>> LoadRules() const {
    ASSIGN_OR_RETURN(std::string text, Read(kRuleCapture));
    std::vector<PolicyRule> rules;
    size_t at = 0;
    while (at < text.size()) {
      size_t end = text.find('\n', at);
      if (end == std::string::npos) end = text.size();
      if (auto r = ParseRule(text.substr(at, end - at))) rules.push_back(*r);
      at = end + 1;
    }
    std::stable_sort(rules.begin(), rules.end(),
                     [](const PolicyRule& a, const PolicyRule& b) { return a.pref < b.pref; });
    std::vector<std::string> out;
    for (const PolicyRule& r : rules) out.push_back(FormatRule(r));
    return out;
  }
  Status Write(const char* path, const std::string& text, const std::string& what) {
    if (text.empty()) {
      Status s = fs_.RemoveFile(path);
      if (!s.ok() && s.err() == ENOENT) return OkStatus();
      return s.WithContext(what);
    }
    return fs_.WriteFileAtomic(path, text).WithContext(what);
  }
  // As the kernel: adding what is there is EEXIST, removing what is not ESRCH.
  Status EditRoute(long long table, const std::string& route, bool add) {
    const std::string what = std::string(add ? "add route " : "remove route ") + route +
                             " in table " + std::to_string(table);
    auto parsed = ParseRoute(route);
    if (!parsed) return InvalidArgumentError(what + ": no route");
    if (!fs_.Exists("/sys/class/net/" + parsed->dev)) {
      return Status(StatusCode::kNotFound, what + ": /sys/class/net/" + parsed->dev + ": ENODEV",
                    ENODEV);
    }
    ASSIGN_OR_RETURN(auto all, LoadRoutes());
    std::vector<std::string>& list = all[table];
    const std::string text = FormatRoute(*parsed);
    auto it = std::find(list.begin(), list.end(), text);
    if (add && it != list.end()) return ErrnoToStatus(EEXIST, what);
    if (!add && it == list.end()) return ErrnoToStatus(ESRCH, what);
    if (add) {
      list.push_back(text);
      std::sort(list.begin(), list.end());
    } else {
      list.erase(it);
    }
    if (list.empty()) all.erase(table);
    return Write(kRouteCapture, RenderRouteCapture(all), what);
  }
  Status EditRule(const std::string& rule, bool add) {
    const std::string what = std::string(add ? "add rule " : "remove rule ") + rule;
    auto parsed = ParseRule(rule);
    if (!parsed) return InvalidArgumentError(what + ": no rule");
    ASSIGN_OR_RETURN(std::vector<std::string> all, LoadRules());
    const std::string text = FormatRule(*parsed);
    auto it = std::find(all.begin(), all.end(), text);
    if (add && it != all.end()) return ErrnoToStatus(EEXIST, what);
    if (!add && it == all.end()) return ErrnoToStatus(ENOENT, what);
    if (add) {
      all.push_back(text);
    } else {
      all.erase(it);
    }
    std::string out;
    for (const std::string& r : all) out += r + "\n";
    return Write(kRuleCapture, out, what);
  }

  HostFs& fs_;
};

}  // namespace

std::unique_ptr<PolicyRoutingBackend> NewTreePolicyRoutingBackend(HostFs& fs) {
  return std::make_unique<Tree>(fs);
}

}  // namespace provisioner
