// provisioner doctor [FILE] [--root DIR] [-o table|json]: every module's
// checks over the discovered facts (and host.yaml when given), with verdict,
// evidence and fix. Exit 1 when any check fails.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>
#include <vector>

#include "engine/cli/commands.h"
#include "engine/core/session.h"
#include "engine/output/check_order.h"
#include "engine/output/render.h"
#include "nlohmann/json.hpp"

namespace provisioner::cli {
namespace {

using nlohmann::json;

int Severity(Verdict v) { return v == Verdict::kFail ? 2 : v == Verdict::kWarn ? 1 : 0; }

json ResultToJson(const CheckResult& r) {
  json ev = json::array();
  for (const auto& [where, value] : r.evidence) ev.push_back({{"source", where}, {"value", value}});
  return {{"module", r.module},
          {"id", r.id},
          {"target", r.target},
          {"verdict", VerdictName(r.verdict)},
          {"summary", r.summary},
          {"evidence", ev},
          {"fix", r.fix.empty() ? json() : json(r.fix)}};
}

// Results that say the same thing about several targets (same check,
// verdict, summary and fix: "not captured" on twelve ports) as one entry,
// in the order of their first appearance.
struct Group {
  const CheckResult* first = nullptr;
  std::vector<std::string> targets;
};

std::vector<Group> GroupResults(const std::vector<CheckResult>& results) {
  std::vector<Group> groups;
  std::map<std::tuple<std::string, int, std::string, std::string>, size_t> index;
  for (const auto& r : results) {
    auto key = std::make_tuple(r.id, static_cast<int>(r.verdict), r.summary, r.fix);
    auto it = index.find(key);
    if (it == index.end()) {
      index.emplace(key, groups.size());
      groups.push_back(Group{&r, {r.target}});
    } else {
      groups[it->second].targets.push_back(r.target);
    }
  }
  return groups;
}

std::string RenderTable(const std::vector<CheckResult>& results, const int counts[3], bool color) {
  std::ostringstream out;
  for (const Group& g : GroupResults(results)) {
    const CheckResult& r = *g.first;
    const char* col = r.verdict == Verdict::kFail   ? "\033[31m"
                      : r.verdict == Verdict::kWarn ? "\033[33m"
                                                    : "\033[32m";
    std::string verdict = VerdictName(r.verdict);
    std::transform(verdict.begin(), verdict.end(), verdict.begin(), ::toupper);
    verdict.resize(4, ' ');
    out << (color ? col : "") << verdict << (color ? "\033[0m" : "") << "  " << r.id << "  ";
    if (g.targets.size() == 1) {
      out << r.target;
    } else {
      out << "\u00d7" << g.targets.size() << ": ";
      for (size_t i = 0; i < g.targets.size(); ++i) out << (i ? ", " : "") << g.targets[i];
    }
    out << "\n      " << r.summary << "\n";
    if (r.verdict != Verdict::kOk) {
      const std::string of = g.targets.size() > 1 ? " (" + r.target + ")" : "";
      for (const auto& [where, value] : r.evidence)
        out << "      evidence" << of << ": " << where << " = " << value << "\n";
      if (g.targets.size() > 1) {
        out << "      (the same for the other " << g.targets.size() - 1
            << "; -o json lists each one's evidence)\n";
      }
      if (!r.fix.empty()) out << "      fix: " << r.fix << "\n";
    }
  }
  if (results.empty() && counts[0] + counts[1] + counts[2] == 0)
    out << "No checks apply to this host.\n";
  out << "\nDoctor: " << counts[2] << " failed, " << counts[1] << " warning"
      << (counts[1] == 1 ? "" : "s") << ", " << counts[0] << " ok";
  const int shown = static_cast<int>(results.size());
  if (shown != counts[0] + counts[1] + counts[2]) out << " (" << shown << " shown)";
  out << ".\n";
  return out.str();
}

// A host with no RDMA at all (no RDMA device, no function that will carry
// one): say so, rather than "no checks apply".
std::optional<CheckResult> NoRdmaResult(const HostFacts& facts) {
  if (!facts.rdma.devices.empty()) return std::nullopt;
  for (const auto& f : facts.pci) {
    if (f.IsNetwork() && f.IsRdmaCapable()) return std::nullopt;
  }
  CheckResult r;
  r.module = "doctor";
  r.id = "host.rdma";
  r.target = facts.root;
  r.verdict = Verdict::kWarn;
  r.summary = "no RDMA on this host: no RDMA device and no RDMA-capable network function";
  r.evidence.emplace_back("/sys/class/infiniband", "(no devices)");
  r.evidence.emplace_back("RDMA-capable PCI functions", "(none)");
  r.fix = "install an RDMA NIC (or its driver), or run doctor on (--root) a host that has one";
  return r;
}

}  // namespace

int RunDoctor(const CommonOptions& opt) {
  std::optional<DesiredState> desired;
  if (!opt.file.empty()) {
    LoadOutcome loaded = LoadFile(opt.file);
    PrintDiagnostics(opt.file, loaded.diagnostics);
    if (!loaded.desired) {
      std::fprintf(stderr, "provisioner: %s: not valid, doctor needs a valid host.yaml (or none)\n",
                   opt.file.c_str());
      return kExitError;
    }
    desired = std::move(loaded.desired);
  }
  std::optional<HostFacts> facts = DiscoverHost(opt);
  if (!facts) return kExitError;
  // spec.rails count: allGpus expands now that the GPUs are known.
  if (desired && !ExpandRailsForHost(opt.file, *facts, &*desired)) return kExitError;
  // Failures first, then warnings, each in module order.
  std::vector<CheckResult> results = CheckHost(desired ? &*desired : nullptr, *facts);
  // Each check's targets as people list them: eth2 before eth10.
  OrderTargetsNaturally(&results);
  if (auto none = NoRdmaResult(*facts)) results.insert(results.begin(), std::move(*none));
  bool failed = std::any_of(results.begin(), results.end(),
                            [](const CheckResult& r) { return r.verdict == Verdict::kFail; });
  // Counted over every check; --only keeps that verdict and worse.
  int counts[3] = {0, 0, 0};
  for (const auto& r : results) ++counts[Severity(r.verdict)];
  if (!opt.only.empty()) {
    const int floor = opt.only == "fail" ? 2 : opt.only == "warn" ? 1 : 0;
    std::vector<CheckResult> kept;
    for (auto& r : results) {
      if (Severity(r.verdict) >= floor) kept.push_back(std::move(r));
    }
    results = std::move(kept);
  }
  if (opt.output != "table") {
    json doc;
    doc["formatVersion"] = kFormatVersion;
    doc["root"] = opt.root_shown;
    doc["file"] = opt.file.empty() ? json() : json(opt.file);
    json checks = json::array();
    for (const auto& r : results) checks.push_back(ResultToJson(r));
    doc["checks"] = checks;
    doc["summary"] = {{"ok", counts[0]}, {"warn", counts[1]}, {"fail", counts[2]}};
    PrintDocument(doc, opt.output);
  } else {
    std::cout << RenderTable(results, counts, opt.color);
  }
  return failed ? kExitError : kExitOk;
}

}  // namespace provisioner::cli
