// provisioner doctor [FILE] [--root DIR] [-o table|json]: every module's
// checks over the discovered facts (and host.yaml when given), with verdict,
// evidence and fix. Exit 1 when any check fails.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>

#include "engine/cli/commands.h"
#include "engine/core/session.h"
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

std::string RenderTable(const std::vector<CheckResult>& results, bool color) {
  std::ostringstream out;
  int counts[3] = {0, 0, 0};
  for (const auto& r : results) {
    ++counts[Severity(r.verdict)];
    const char* col = r.verdict == Verdict::kFail   ? "\033[31m"
                      : r.verdict == Verdict::kWarn ? "\033[33m"
                                                    : "\033[32m";
    std::string verdict = VerdictName(r.verdict);
    std::transform(verdict.begin(), verdict.end(), verdict.begin(), ::toupper);
    verdict.resize(4, ' ');
    out << (color ? col : "") << verdict << (color ? "\033[0m" : "") << "  " << r.id << "  "
        << r.target << "\n      " << r.summary << "\n";
    if (r.verdict != Verdict::kOk) {
      for (const auto& [where, value] : r.evidence)
        out << "      evidence: " << where << " = " << value << "\n";
      if (!r.fix.empty()) out << "      fix: " << r.fix << "\n";
    }
  }
  if (results.empty()) out << "No checks apply to this host.\n";
  out << "\nDoctor: " << counts[2] << " failed, " << counts[1] << " warning"
      << (counts[1] == 1 ? "" : "s") << ", " << counts[0] << " ok.\n";
  return out.str();
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
  bool failed = std::any_of(results.begin(), results.end(),
                            [](const CheckResult& r) { return r.verdict == Verdict::kFail; });
  if (opt.output == "json") {
    json doc;
    doc["formatVersion"] = kFormatVersion;
    doc["root"] = opt.root;
    doc["file"] = opt.file.empty() ? json() : json(opt.file);
    json checks = json::array();
    int counts[3] = {0, 0, 0};
    for (const auto& r : results) {
      checks.push_back(ResultToJson(r));
      ++counts[Severity(r.verdict)];
    }
    doc["checks"] = checks;
    doc["summary"] = {{"ok", counts[0]}, {"warn", counts[1]}, {"fail", counts[2]}};
    std::cout << doc.dump(2) << "\n";
  } else {
    std::cout << RenderTable(results, opt.color);
  }
  return failed ? kExitError : kExitOk;
}

}  // namespace provisioner::cli
