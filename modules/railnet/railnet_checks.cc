#include "modules/railnet/railnet_checks.h"

#include <algorithm>
#include <string>
#include <utility>

#include "modules/railnet/policy_routing.h"
#include "modules/railnet/railnet_planner.h"
#include "nlohmann/json.hpp"

namespace provisioner {
namespace {

constexpr char kModule[] = "railnet";

CheckResult Result(const RailWant& w, const std::string& id, const std::string& what) {
  CheckResult r;
  r.module = kModule;
  r.id = id;
  r.target = w.nic + " (" + w.netdev + ")";
  r.summary = what;
  return r;
}

void Fail(CheckResult& r, const std::string& summary, const std::string& fix) {
  r.verdict = Verdict::kFail;
  r.summary = summary;
  r.fix = fix;
}

const std::string kApply = "run `provisioner apply` with this host.yaml";

void Addresses(const RailWant& w, const RailnetFacts& f, CheckSink& sink) {
  if (!w.addresses) return;
  CheckResult r = Result(w, "railnet.address", "addresses present");
  auto it = f.addresses.find(w.netdev);
  const std::vector<std::string> have =
      it != f.addresses.end() ? it->second : std::vector<std::string>{};
  r.evidence.push_back({"addresses of " + w.netdev, nlohmann::json(have).dump()});
  std::vector<std::string> missing;
  for (const std::string& a : *w.addresses) {
    if (std::find(have.begin(), have.end(), a) == have.end()) missing.push_back(a);
  }
  if (!missing.empty()) {
    Fail(r, "address " + nlohmann::json(missing).dump() + " missing on " + w.netdev,
         "fix the address: `ip addr add " + missing.front() + " dev " + w.netdev + "`, or " +
             kApply);
  }
  sink.Add(std::move(r));
}

void Table(const RailWant& w, const RailnetFacts& f, CheckSink& sink) {
  if (!w.table) return;
  const std::string t = std::to_string(*w.table);
  CheckResult r = Result(w, "railnet.table", "table " + t + " holds the rail's routes");
  auto it = f.routes.find(*w.table);
  const std::vector<std::string> have =
      it != f.routes.end() ? it->second : std::vector<std::string>{};
  r.evidence.push_back({"table " + t, nlohmann::json(have).dump()});
  for (const std::string& route : w.routes) {
    if (std::find(have.begin(), have.end(), route) == have.end()) {
      Fail(r, "table " + t + " lacks " + route,
           "fix the table: `ip route add " + route + " table " + t + "`, or " + kApply);
      break;
    }
  }
  sink.Add(std::move(r));

  CheckResult rule = Result(w, "railnet.rule", "rules look up table " + t);
  const std::vector<std::string> rules = RulesOfTable(f.rules, *w.table);
  rule.evidence.push_back({"rules of table " + t, nlohmann::json(rules).dump()});
  for (const std::string& want : w.rules) {
    if (std::find(rules.begin(), rules.end(), want) == rules.end()) {
      auto p = ParseRule(want);
      Fail(rule, "rule `" + want + "` missing: replies from " + (p ? p->from : want) +
                     " leave by the main table's route, not " + w.netdev,
           "fix the rule: `ip rule add " + want + "`, or " + kApply);
      break;
    }
  }
  sink.Add(std::move(rule));
}

void Sysctls(const RailWant& w, const RailnetFacts& f, CheckSink& sink) {
  if (w.sysctl.empty()) return;
  CheckResult r = Result(w, "railnet.sysctl", "ARP and reverse-path settings");
  auto it = f.sysctls.find(w.netdev);
  for (const auto& [key, value] : w.sysctl) {
    const std::string path = "/proc/sys/net/ipv4/conf/" + w.netdev + "/" + key;
    std::optional<long long> have;
    if (it != f.sysctls.end()) {
      if (auto k = it->second.find(key); k != it->second.end()) have = k->second;
    }
    r.evidence.push_back({path, have ? std::to_string(*have) : "unread"});
    if (have != value && r.verdict == Verdict::kOk) {
      Fail(r, "net.ipv4.conf." + w.netdev + "." + key + " is " +
                  (have ? std::to_string(*have) : "unread") + ", wants " + std::to_string(value),
           "fix the sysctl: `sysctl -w net.ipv4.conf." + w.netdev + "." + key + "=" +
               std::to_string(value) + "`, or " + kApply);
    }
  }
  sink.Add(std::move(r));
}

void Route(const RailWant& w, const RailnetFacts& f, CheckSink& sink) {
  if (w.peer.empty() || !w.table) return;
  CheckResult r = Result(w, "railnet.route", "a neighbour is routed by the rail");
  const std::string key = w.peer + " from " + w.source;
  auto it = f.lookups.find(key);
  const std::string dev = it != f.lookups.end() ? it->second : "not looked up";
  r.evidence.push_back({"ip route get " + key, dev});
  if (dev != w.netdev) {
    Fail(r, "the route to " + w.peer + " from " + w.source + " leaves by " +
                (dev.empty() ? "no netdev" : dev) + ", not " + w.netdev,
         "fix the table and rule of this rail (railnet.table, railnet.rule above), or " + kApply);
  }
  sink.Add(std::move(r));
}

void Gid(const RailWant& w, const HostFacts& facts, CheckSink& sink) {
  if (w.source.empty()) return;
  for (const RdmaDevice& d : facts.rdma.devices) {
    for (const RdmaPort& p : d.ports) {
      if (p.netdev != w.netdev) continue;
      CheckResult r = Result(w, "railnet.gid", "RoCE v2 GID of " + w.source);
      r.target = w.nic + " (" + d.name + " port " + std::to_string(p.port) + ")";
      if (!p.gids_captured) {
        r.verdict = Verdict::kWarn;
        r.summary = "the GID table of " + d.name + " was not read";
        sink.Add(std::move(r));
        return;
      }
      const bool found = std::any_of(p.roce_v2.begin(), p.roce_v2.end(), [&](const RoceAddress& a) {
        return a.address == w.source && a.netdev == w.netdev;
      });
      r.evidence.push_back({d.name + " port " + std::to_string(p.port) + " RoCE v2 GIDs",
                            std::to_string(p.roce_v2.size())});
      if (!found) {
        Fail(r, "no RoCE v2 GID for " + w.source + " on " + d.name,
             "fix the address first (railnet.address); the kernel adds the GID for an address "
             "of the port's netdev that is up");
      }
      sink.Add(std::move(r));
      return;
    }
  }
}

}  // namespace

void CheckRailnet(const DesiredState& desired, const HostFacts& facts, CheckSink& sink) {
  for (const RailWant& w : WantedRails(desired, facts, nullptr)) {
    Addresses(w, facts.railnet, sink);
    Table(w, facts.railnet, sink);
    Sysctls(w, facts.railnet, sink);
    Route(w, facts.railnet, sink);
    Gid(w, facts, sink);
  }
}

}  // namespace provisioner
