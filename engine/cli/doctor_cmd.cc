// provisioner doctor [FILE] [--root DIR] [-o table|json]: every module's
// checks over the discovered facts (and host.yaml when given), with verdict,
// evidence and fix. Exit 1 when any check fails.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>

#include "engine/cli/commands.h"
#include "engine/config/loader.h"
#include "engine/core/engine.h"
#include "engine/host/host_fs.h"
#include "engine/module/registry.h"
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
    LoadResult r = LoadDesiredStateFromFile(opt.file);
    for (const auto& d : r.diagnostics)
      std::fprintf(stderr, "%s\n", FormatDiagnostic(opt.file, r.marks, d).c_str());
    if (!r.state || HasErrors(r.diagnostics)) {
      std::fprintf(stderr, "provisioner: %s: not valid, doctor needs a valid host.yaml (or none)\n",
                   opt.file.c_str());
      return kExitError;
    }
    desired = std::move(r.state);
  }
  std::optional<HostFacts> facts = DiscoverHost(opt);
  if (!facts) return kExitError;
  // spec.rails count: allGpus expands now that the GPUs are known.
  if (desired && !ExpandRailsForHost(opt.file, *facts, &*desired)) return kExitError;
  CheckSink sink;
  // Checks are pure (desired + facts), so fresh module instances serve.
  for (const auto& m : ModuleRegistry::CreateAll()) m->Check(desired ? &*desired : nullptr, *facts, sink);
  std::vector<CheckResult> results = sink.results();
  // Failures first, then warnings, each in module order.
  std::stable_sort(results.begin(), results.end(), [](const CheckResult& a, const CheckResult& b) {
    return Severity(a.verdict) > Severity(b.verdict);
  });
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
