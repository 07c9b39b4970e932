#include "engine/cli/commands.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <vector>

#include "engine/base/fd_io.h"
#include "engine/config/loader.h"
#include "engine/core/session.h"
#include "engine/output/progress.h"
#include "engine/output/render.h"
#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"

namespace provisioner::cli {
namespace {

using nlohmann::json;

void PrintError(const std::string& message) {
  std::fprintf(stderr, "provisioner: error: %s\n", message.c_str());
}

std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
}

// On stderr, never stdout (stdout may be JSON); redrawn on a terminal.
std::unique_ptr<ConsoleProgress> NewProgress() {
  return std::make_unique<ConsoleProgress>(stderr,
                                           ProgressOptions{.terminal = ::isatty(STDERR_FILENO) == 1});
}

HostOptions HostOf(const CommonOptions& opt, Progress* progress) {
  HostOptions host;
  host.root = opt.root;
  host.settle_timeout = Millis(opt.settle_timeout_s);
  host.progress = progress;
  return host;
}


// Prints a plan's diagnostics and, when there is no plan, why.
void ReportPlanProblems(const std::string& file, const PlanOutcome& p) {
  for (const auto& batch : p.diagnostics) PrintDiagnostics(file, batch);
  if (p.status.ok()) return;
  if (!p.file_invalid) {
    PrintError(p.status.message());
    return;
  }
  const FileDiagnostics& last = p.diagnostics.back();
  const int n = last.errors();
  if (last.stage == FileDiagnostics::Stage::kLoad) {
    std::fprintf(stderr, "provisioner: %s: %d error%s\n", file.c_str(), n, n == 1 ? "" : "s");
  } else if (last.stage == FileDiagnostics::Stage::kRails) {
    std::fprintf(stderr, "provisioner: %s: %d error%s (spec.rails with count: allGpus, %zu GPUs)\n",
                 file.c_str(), n, n == 1 ? "" : "s", last.gpus);
  }
}

// The plan's warnings that ReportPlanProblems has not printed already (as
// located diagnostics on stderr): the table shows each warning once.
Plan WithUnreportedWarnings(const PlanOutcome& p) {
  std::multiset<std::string> reported;
  for (const auto& batch : p.diagnostics) {
    if (batch.stage != FileDiagnostics::Stage::kPlan) continue;
    for (const auto& d : batch.items) {
      if (d.severity == Severity::kWarning) reported.insert(PlanWarningText(d));
    }
  }
  Plan plan = p.plan;
  plan.warnings.clear();
  for (const auto& w : p.plan.warnings) {
    auto it = reported.find(w);
    if (it != reported.end()) {
      reported.erase(it);
    } else {
      plan.warnings.push_back(w);
    }
  }
  return plan;
}

json ChangeOutcomeToJson(const ChangeOutcome& c) {
  json j = ChangeToJson(c.change);
  j["status"] = ChangeStatusName(c.status);
  if (c.status == ChangeStatus::kFailed || c.status == ChangeStatus::kRollbackFailed) {
    j["error"] = c.error;
  }
  if (c.status == ChangeStatus::kDeferredToReboot) j["note"] = c.note;
  return j;
}

void RenderApplyTable(const ApplyOutcome& out) {
  for (const auto& c : out.changes) {
    std::cout << "  " << ChangeSymbol(c.change) << " " << c.change.id << ": "
              << c.change.before.dump() << " -> " << c.change.after.dump() << "  "
              << (c.status == ChangeStatus::kFailed             ? "FAILED"
                  : c.status == ChangeStatus::kDeferredToReboot ? "done, takes effect at the next reboot"
                                                                : "done, verified")
              << "\n";
    if (!c.note.empty()) std::cout << "      # " << c.note << "\n";
  }
  for (const auto& r : out.rolled_back) {
    std::cout << "  rolled back " << r.change.id << " to " << r.change.after.dump()
              << (r.status == ChangeStatus::kRolledBack ? "" : "  (ROLLBACK FAILED: " + r.error + ")")
              << "\n";
  }
  if (out.status.ok()) {
    std::cout << "Apply complete: " << out.applied << " change" << (out.applied == 1 ? "" : "s")
              << " made and verified.\n";
    if (out.reboot_required) std::cout << "A reboot is required for some changes to take effect.\n";
  }
}

}  // namespace

void PrintDiagnostics(const std::string& file, const FileDiagnostics& diagnostics) {
  for (const auto& d : diagnostics.items) {
    std::fprintf(stderr, "%s\n", FormatDiagnostic(file, diagnostics.marks, d).c_str());
  }
}

// Loads host.yaml; prints every diagnostic; nullopt when there are errors.
std::optional<DesiredState> LoadOrReport(const std::string& file) {
  LoadOutcome loaded = LoadFile(file);
  PrintDiagnostics(file, loaded.diagnostics);
  if (!loaded.desired) {
    const int n = loaded.diagnostics.errors();
    std::fprintf(stderr, "provisioner: %s: %d error%s\n", file.c_str(), n, n == 1 ? "" : "s");
  }
  return std::move(loaded.desired);
}

std::optional<HostFacts> DiscoverHost(const CommonOptions& opt) {
  auto progress = NewProgress();
  auto facts = provisioner::DiscoverHost(HostOf(opt, progress.get()));
  if (!facts.ok()) {
    PrintError(facts.status().message());
    return std::nullopt;
  }
  return std::move(facts).value();
}

int RunDiscover(const CommonOptions& opt) {
  std::optional<HostFacts> facts = DiscoverHost(opt);
  if (!facts) return kExitError;
  if (opt.output == "json") {
    // Streamed (the same text as dump(2)): no second copy of a document that
    // is megabytes on a 2048-function host.
    std::cout << std::setw(2) << FactsToJson(*facts) << "\n";
  } else if (opt.output == "yaml") {
    std::cout << JsonToYaml(FactsToJson(*facts));
  } else {
    std::cout << RenderFactsTable(*facts);
  }
  return kExitOk;
}

int RunValidate(const CommonOptions& opt) {
  auto desired = LoadOrReport(opt.file);
  if (!desired) return kExitError;
  std::printf("%s: valid (%zu nics, %zu ipPools, %zu multusConfigs, %zu kernelModules)\n",
              opt.file.c_str(), desired->nics.size(), desired->ip_pools.size(),
              desired->multus_configs.size(), desired->kernel_modules.size());
  return kExitOk;
}

int RunPlan(const CommonOptions& opt) {
  auto progress = NewProgress();
  PlanRequest request;
  request.file = opt.file;
  request.host = HostOf(opt, progress.get());
  PlanOutcome p = PlanFile(request);
  ReportPlanProblems(opt.file, p);
  if (!p.status.ok()) return kExitError;
  const Plan& plan = p.plan;
  if (!opt.plan_out.empty()) {
    std::ofstream out(opt.plan_out, std::ios::trunc);
    out << SavedPlanRecord(p, opt.file, opt.root).dump(2) << "\n";
    out.close();
    if (!out) {
      PrintError(ErrnoToStatus(errno, "write " + opt.plan_out).message());
      return kExitError;
    }
    std::fprintf(stderr, "provisioner: plan saved to %s; apply it with: provisioner apply %s\n",
                 opt.plan_out.c_str(), opt.plan_out.c_str());
  }
  if (opt.output == "json") {
    std::cout << PlanToJson(plan, opt.root).dump(2) << "\n";
  } else {
    std::cout << RenderPlanTable(WithUnreportedWarnings(p), opt.color);
  }
  if (opt.detailed_exitcode && !plan.changes.empty()) return kExitChangesPending;
  return kExitOk;
}

int RunApply(const CommonOptions& opt) {
  // A saved plan (plan --out) or a host.yaml.
  std::optional<SavedPlan> saved;
  // Bounded, and only a regular file (a FIFO hung here); a file that cannot
  // be opened is left to the host.yaml loader, which names the error.
  constexpr size_t kMaxSavedPlanBytes = size_t{64} << 20;
  std::string text;
  const char* not_regular = nullptr;
  const int read_error = ReadRegularFile(opt.file, kMaxSavedPlanBytes, &text, &not_regular);
  if (read_error < 0) {
    PrintError("read " + opt.file + ": " + not_regular + ", not a regular file: refused");
    return kExitError;
  }
  if (read_error == EFBIG) {
    PrintError("read " + opt.file + ": larger than " + std::to_string(kMaxSavedPlanBytes) +
               " bytes: refused");
    return kExitError;
  }
  if (read_error == 0) {
    auto parsed = ParseSavedPlan(text);
    if (!parsed.ok()) {
      PrintError("saved plan " + opt.file + " is malformed: " + parsed.status().message());
      return kExitError;
    }
    saved = std::move(parsed).value();
  }
  auto progress = NewProgress();
  PlanRequest request;
  request.file = opt.file;
  request.host = HostOf(opt, progress.get());
  request.lock = !opt.dry_run;
  request.lock_timeout = Millis(opt.lock_timeout_s);
  PlanOutcome p = saved ? PlanSavedFile(*saved, opt.file, request, opt.root_given) : PlanFile(request);
  ReportPlanProblems(saved ? saved->desired_file : opt.file, p);
  if (!p.status.ok()) return kExitError;
  if (opt.rollback) {
    if (!p.interrupted) {
      std::printf("Nothing to roll back: no interrupted apply under %s.\n", opt.root.c_str());
      return kExitOk;
    }
    std::fprintf(stderr, "provisioner: rolling back the interrupted apply (%s)\n",
                 p.interrupted->Describe().c_str());
    UseRollbackPlan(&p);
  }
  const Plan& plan = p.plan;
  // Those not already printed as diagnostics (an interrupted apply).
  const Plan table_plan = WithUnreportedWarnings(p);
  for (const auto& w : table_plan.warnings) spdlog::warn("{}", w);
  ApplyOutcome out = ApplyPlanned(p, ApplyRequest{.dry_run = opt.dry_run, .rollback = opt.rollback});
  progress->Finish();  // results start on a clean line
  if (!out.journal_status.ok()) PrintError(out.journal_status.message());
  if (opt.rollback && plan.changes.empty()) {
    std::printf("Nothing to roll back: the interrupted apply had not changed anything.\n");
    return out.journal_status.ok() ? kExitOk : kExitError;
  }
  json doc = PlanToJson(plan, opt.root);
  doc["dryRun"] = opt.dry_run;
  if (!out.ran) {
    for (auto& c : doc["changes"]) c["status"] = "planned";
    if (opt.output == "json") {
      std::cout << doc.dump(2) << "\n";
    } else {
      if (opt.dry_run && !plan.changes.empty()) std::cout << "Dry run: nothing was changed.\n";
      // The warnings went to stderr above.
      Plan quiet = table_plan;
      quiet.warnings.clear();
      std::cout << RenderPlanTable(quiet, opt.color);
    }
    return kExitOk;
  }
  if (!out.reboot_marker_status.ok()) {
    spdlog::warn("could not write the reboot marker: {}", out.reboot_marker_status.message());
  }
  json changes = json::array();
  for (const auto& c : out.changes) changes.push_back(ChangeOutcomeToJson(c));
  json rolled = json::array();
  for (const auto& r : out.rolled_back) rolled.push_back(ChangeOutcomeToJson(r));
  doc["changes"] = changes;
  doc["rolledBack"] = rolled;
  doc["summary"]["applied"] = out.applied;
  doc["summary"]["rebootRequired"] = out.reboot_required;
  if (!out.status.ok()) doc["error"] = out.status.message();
  if (opt.output == "json") {
    std::cout << doc.dump(2) << "\n";
  } else {
    RenderApplyTable(out);
  }
  if (!out.status.ok()) {
    PrintError(out.status.message());
    if (!out.rolled_back.empty()) {
      std::fprintf(stderr, "provisioner: rolled back %zu change%s\n", out.rolled_back.size(),
                   out.rolled_back.size() == 1 ? "" : "s");
    }
    return kExitError;
  }
  return out.reboot_required ? kExitRebootRequired : kExitOk;
}

}  // namespace provisioner::cli
