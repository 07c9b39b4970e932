#include "engine/cli/commands.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "engine/base/fd_io.h"
#include "engine/base/interrupt.h"
#include "engine/base/strings.h"
#include "engine/config/loader.h"
#include "engine/core/session.h"
#include "engine/output/progress.h"
#include "engine/output/render.h"
#include "engine/plan/change_text.h"
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
// None with -q or --log-level error. A signal during apply is acknowledged at
// once (InterruptGuard::signal()).
std::unique_ptr<ConsoleProgress> NewProgress(const CommonOptions& opt) {
  if (opt.quiet) return nullptr;
  return std::make_unique<ConsoleProgress>(
      stderr, ProgressOptions{.terminal = ::isatty(STDERR_FILENO) == 1,
                              .interrupt = &InterruptGuard::signal(),
                              .step_lines = opt.verbose > 0});
}

void FinishProgress(const std::unique_ptr<ConsoleProgress>& progress) {
  if (progress) progress->Finish();
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
  // Each diagnostic, and under a selector that matches nothing what could
  // match (item 8's note): a note after its error, not after every error.
  std::set<std::string> hinted;
  for (const auto& batch : p.diagnostics) {
    PrintDiagnostics(file, batch,
                     [&](const Diagnostic& d) { PrintSelectorHint(file, p, batch, d, &hinted); });
  }
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

// "1 added, 2 changed, 1 replaced, 0 removed": the plan's counts, past tense.
std::string DoneCounts(const std::vector<Change>& changes) {
  const PlanCounts n = CountActions(changes);
  std::string text = std::to_string(n.add) + " added, " + std::to_string(n.change) + " changed, ";
  if (n.replace) text += std::to_string(n.replace) + " replaced, ";
  return text + std::to_string(n.remove) + " removed";
}

// The changes in the plan's spelling and colours, each with what became of
// it, then one closing line.
// `rollback`: apply --rollback, whose changes undo an interrupted apply.
void RenderApplyTable(const ApplyOutcome& out, const std::string& root, bool color,
                      bool rollback) {
  std::vector<Change> made;
  for (const auto& c : out.changes) {
    std::cout << "  " << RenderChangeLine(c.change, color) << "  "
              << (c.status == ChangeStatus::kFailed ? "FAILED"
                  : c.status == ChangeStatus::kDeferredToReboot
                      ? "done, takes effect at the next reboot"
                      : "done, verified")
              << "\n";
    if (!c.note.empty()) std::cout << "      # " << c.note << "\n";
    if (c.status != ChangeStatus::kFailed) made.push_back(c.change);
  }
  size_t undone = 0;
  for (const auto& r : out.rolled_back) {
    std::cout << "  undone: " << ChangeText(r.change)
              << (r.status == ChangeStatus::kRolledBack ? ""
                                                        : "  (ROLLBACK FAILED: " + r.error + ")")
              << "\n";
    undone += r.status == ChangeStatus::kRolledBack;
  }
  if (!out.rolled_back.empty() && undone == out.rolled_back.size()) {
    std::cout << "Rollback complete: " << undone << " change" << (undone == 1 ? "" : "s")
              << " undone under " << AbsoluteRoot(root) << ".\n";
  } else if (!out.rolled_back.empty()) {  // not "complete": some are still on the host
    std::cout << "Rollback incomplete: " << undone << " of " << out.rolled_back.size()
              << " changes undone under " << AbsoluteRoot(root) << " (ROLLBACK FAILED above).\n";
  }
  if (out.status.ok() && rollback) {
    std::cout << "Rollback complete: " << made.size() << " change" << (made.size() == 1 ? "" : "s")
              << " undone under " << AbsoluteRoot(root) << ".\n";
  } else if (out.status.ok()) {
    std::cout << "Apply complete: " << DoneCounts(made) << "; verified under "
              << AbsoluteRoot(root) << ".\n";
    if (out.reboot_required) std::cout << "A reboot is required for some changes to take effect.\n";
  }
}

}  // namespace

std::string AbsoluteRoot(const std::string& root) {
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(root, ec);
  if (ec) return root;
  std::string text = abs.lexically_normal().string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
}

void PrintDocument(const json& doc, const std::string& format) {
  if (format == "yaml") {
    std::cout << JsonToYaml(doc);
  } else {
    std::cout << doc.dump(2) << "\n";
  }
}

void PrintDiagnostics(const std::string& file, const FileDiagnostics& diagnostics,
                      const std::function<void(const Diagnostic&)>& after) {
  for (const auto& d : diagnostics.items) {
    // -q (--log-level error): errors only.
    if (d.severity == Severity::kWarning && !spdlog::should_log(spdlog::level::warn)) continue;
    std::fprintf(stderr, "%s\n", FormatDiagnostic(file, diagnostics.marks, d).c_str());
    if (after) after(d);
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
  auto progress = NewProgress(opt);
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
  if (opt.output != "table") {
    // The root as given (a .ttar stays a .ttar, not its removed extraction).
    json doc = FactsToJson(*facts);
    if (doc.is_object() && doc.contains("root")) doc["root"] = opt.root_shown;
    if (opt.output == "json") {
      // Streamed (the same text as dump(2)).
      std::cout << std::setw(2) << doc << "\n";
    } else {
      std::cout << JsonToYaml(doc);
    }
  } else {
    std::cout << RenderFactsTable(*facts);
  }
  return kExitOk;
}

namespace {

json DiagnosticsToJson(const std::string& file, const std::vector<FileDiagnostics>& batches) {
  json out = json::array();
  for (const auto& batch : batches) {
    for (const auto& d : batch.items) {
      // Located for CI annotations and editors: file, line, column (null
      // when the diagnostic has no place in the file), the field's path.
      const SourceMark m = batch.marks.Find(d.path);
      out.push_back({{"severity", d.severity == Severity::kError ? "error" : "warning"},
                     {"file", file},
                     {"line", m.line > 0 ? json(m.line) : json()},
                     {"column", m.line > 0 ? json(m.column) : json()},
                     {"field", d.path},
                     {"path", d.path},
                     {"message", d.message},
                     {"text", FormatDiagnostic(file, batch.marks, d)}});
    }
  }
  return out;
}

json DesiredCounts(const DesiredState& d) {
  return {{"nics", d.nics.size()},
          {"ipPools", d.ip_pools.size()},
          {"multusConfigs", d.multus_configs.size()},
          {"kernelModules", d.kernel_modules.size()}};
}

std::string CountsText(const DesiredState& d) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "%zu nics, %zu ipPools, %zu multusConfigs, %zu kernelModules",
                d.nics.size(), d.ip_pools.size(), d.multus_configs.size(), d.kernel_modules.size());
  return buf;
}

}  // namespace

// Offline by default (CI validates host.yaml without the hardware): schema
// and semantics. With an explicit --root it also plans against that host
// (without the lock, writing nothing), so every host check plan makes runs.
int RunValidate(const CommonOptions& opt) {
  json doc;
  doc["formatVersion"] = kFormatVersion;
  doc["file"] = opt.file;
  doc["hostChecked"] = opt.root_given;
  doc["root"] = opt.root_given ? json(opt.root_shown) : json();
  std::optional<DesiredState> desired;
  std::vector<FileDiagnostics> batches;
  std::optional<size_t> changes;
  if (!opt.root_given) {
    LoadOutcome loaded = LoadFile(opt.file);
    PrintDiagnostics(opt.file, loaded.diagnostics);
    if (!loaded.desired) {
      const int n = loaded.diagnostics.errors();
      std::fprintf(stderr, "provisioner: %s: %d error%s\n", opt.file.c_str(), n, n == 1 ? "" : "s");
    }
    desired = std::move(loaded.desired);
    batches.push_back(std::move(loaded.diagnostics));
  } else {
    auto progress = NewProgress(opt);
    PlanRequest request;
    request.file = opt.file;
    request.host = HostOf(opt, progress.get());
    request.lock = false;
    PlanOutcome p = PlanFile(request);
    FinishProgress(progress);
    ReportPlanProblems(opt.file, p);
    if (!p.status.ok() && !p.file_invalid) return kExitError;  // the host itself: no verdict
    if (p.status.ok()) {
      desired = std::move(p.desired);
      changes = p.plan.changes.size();
    }
    batches = std::move(p.diagnostics);
  }
  doc["valid"] = desired.has_value();
  doc["diagnostics"] = DiagnosticsToJson(opt.file, batches);
  if (desired) doc["counts"] = DesiredCounts(*desired);
  if (changes) doc["changes"] = *changes;
  if (opt.output != "table") {
    PrintDocument(doc, opt.output);
  } else if (desired && !opt.root_given) {
    std::printf(
        "%s: valid (%s): schema and semantics; no host checked (--root DIR checks a host, "
        "--root / this one)\n",
        opt.file.c_str(), CountsText(*desired).c_str());
  } else if (desired) {
    std::printf(
        "%s: valid (%s) for the host under %s: schema, semantics and host checks; plan has "
        "%zu change%s\n",
        opt.file.c_str(), CountsText(*desired).c_str(), AbsoluteRoot(opt.root).c_str(), *changes,
        *changes == 1 ? "" : "s");
  }
  return desired ? kExitOk : kExitError;
}

int RunPlan(const CommonOptions& opt) {
  PlanRequest request;
  request.file = opt.file;
  // The file is read once (a rails plan opens it once): a saved plan where a
  // host.yaml belongs is said, with what to do; else these bytes are loaded.
  // A file that cannot be read here is left to the loader, which names why.
  {
    std::string text;
    const char* not_regular = nullptr;
    if (ReadRegularFile(opt.file, kMaxHostYamlBytes, &text, &not_regular) == 0) {
      auto saved = ParseSavedPlan(text);
      if (saved.ok() && saved->has_value()) {
        PrintError(opt.file + " is a saved plan (plan --out), not a host.yaml; apply it with: " +
                   "provisioner apply " + opt.file + "; read it with: provisioner show " +
                   opt.file);
        return kExitError;
      }
      request.text = std::move(text);
    }
  }
  auto progress = NewProgress(opt);
  request.host = HostOf(opt, progress.get());
  PlanOutcome p = PlanFile(request);
  ReportPlanProblems(opt.file, p);
  if (!p.status.ok()) {
    // -o json|yaml: still one document, with the diagnostics (CI reads it).
    if (opt.output != "table") {
      json doc;
      doc["formatVersion"] = kFormatVersion;
      doc["file"] = opt.file;
      doc["root"] = opt.root_shown;
      doc["valid"] = !p.file_invalid;
      doc["error"] = p.status.message();
      doc["diagnostics"] = DiagnosticsToJson(opt.file, p.diagnostics);
      doc["changes"] = json::array();
      PrintDocument(doc, opt.output);
    }
    return kExitError;
  }
  const Plan& plan = p.plan;
  if (!opt.plan_out.empty()) {
    std::ofstream out(opt.plan_out, std::ios::trunc);
    out << SavedPlanRecord(p, opt.file, AbsoluteRoot(opt.root)).dump(2) << "\n";
    out.close();
    if (!out) {
      PrintError(ErrnoToStatus(errno, "write " + opt.plan_out).message());
      return kExitError;
    }
    std::fprintf(stderr,
                 "provisioner: plan for the host under %s saved to %s; apply it with: "
                 "provisioner apply %s\n",
                 AbsoluteRoot(opt.root).c_str(), opt.plan_out.c_str(), opt.plan_out.c_str());
  }
  // Warnings (an apply in progress, an interrupted one) on stderr, never
  // in the table: -q silences them; -o json keeps them in "warnings".
  Plan table_plan = WithUnreportedWarnings(p);
  for (const auto& w : table_plan.warnings) spdlog::warn("{}", w);
  table_plan.warnings.clear();
  if (opt.output != "table") {
    PrintDocument(PlanToJson(plan, opt.root_shown), opt.output);
  } else {
    std::cout << RenderPlanTable(table_plan, opt.color);
  }
  // A reboot pending (firmware set for the next boot) is not "no changes".
  if (opt.detailed_exitcode && (!plan.changes.empty() || !plan.set_for_next_boot.empty())) {
    return kExitChangesPending;
  }
  return kExitOk;
}

int RunApply(const CommonOptions& given) {
  CommonOptions opt = given;
  if (int rc = UseJournalHostYaml(&opt); rc >= 0) return rc;
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
  auto progress = NewProgress(opt);
  PlanRequest request;
  request.file = opt.file;
  // A host.yaml is loaded from the bytes read above (one read, as plan does);
  // one above the loader's bound is left to it to refuse.
  if (!saved && read_error == 0 && text.size() <= kMaxHostYamlBytes) request.text = std::move(text);
  if (opt.rollback && opt.file.empty()) request.text = JournalOnlyHostYaml();  // an old journal
  request.host = HostOf(opt, progress.get());
  request.lock = !opt.dry_run;
  request.lock_timeout = Millis(opt.lock_timeout_s);
  PlanOutcome p =
      saved ? PlanSavedFile(*saved, opt.file, request, opt.root_given) : PlanFile(request);
  ReportPlanProblems(saved ? saved->desired_file : opt.file, p);
  if (!p.status.ok()) return kExitError;
  // The root this apply changes: a saved plan's own unless --root was given.
  const std::string root = saved && !opt.root_given ? saved->root : opt.root;
  if (opt.rollback) {
    if (!p.interrupted) {
      std::printf("Nothing to roll back: no interrupted apply under %s.\n", root.c_str());
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
  // A person at the keyboard (stdin a terminal, whatever stdout is): show
  // the plan and ask (terraform's apply); -y shows it and goes on. Never
  // without one (systemd, Ansible, cloud-init), nor for a saved plan: that
  // plan is the approval.
  if (!opt.dry_run && !saved && !plan.changes.empty() && Interactive()) {
    FinishProgress(progress);
    std::FILE* ask = PromptStream(opt);
    Plan shown = table_plan;
    shown.warnings.clear();
    std::fputs(RenderPlanTable(shown, opt.color_allowed && ::isatty(::fileno(ask)) == 1).c_str(),
               ask);
    const size_t n = plan.changes.size();
    const std::string what = std::string(opt.rollback ? "Roll back " : "Apply ") +
                             std::to_string(n) + " change" + (n == 1 ? "" : "s") + " to " +
                             AbsoluteRoot(root);
    if (opt.auto_approve) {
      std::fprintf(ask, "\n%s (--auto-approve).\n", what.c_str());
      std::fflush(ask);
    } else if (!Confirm(ask, "\n" + what + "?")) {
      std::fprintf(stderr, "provisioner: apply cancelled; nothing was changed under %s\n",
                   AbsoluteRoot(root).c_str());
      return kExitError;
    }
  }
  ApplyOutcome out = ApplyPlanned(
      p, ApplyRequest{.dry_run = opt.dry_run,
                      .rollback = opt.rollback,
                      .parallelism = opt.parallelism > 0 ? opt.parallelism : DefaultParallelism()});
  FinishProgress(progress);  // results start on a clean line
  if (!out.journal_status.ok()) PrintError(out.journal_status.message());
  if (opt.rollback && plan.changes.empty()) {
    std::printf("Nothing to roll back: the interrupted apply had not changed anything.\n");
    return out.journal_status.ok() ? kExitOk : kExitError;
  }
  json doc = PlanToJson(plan, AbsoluteRoot(root));
  doc["dryRun"] = opt.dry_run;
  if (p.already_applied) doc["alreadyApplied"] = true;
  if (!out.ran) {
    for (auto& c : doc["changes"]) c["status"] = "planned";
    if (opt.output != "table") {
      PrintDocument(doc, opt.output);
    } else {
      if (p.already_applied) {
        std::cout << "Saved plan " << opt.file << " is already applied: the host under "
                  << AbsoluteRoot(root) << " matches " << saved->desired_file << ".\n";
      }
      // The warnings went to stderr above.
      Plan quiet = table_plan;
      quiet.warnings.clear();
      std::cout << RenderPlanTable(quiet, opt.color, opt.dry_run);
      // A footer, after what would have been done (terraform's last line).
      if (opt.dry_run && !plan.changes.empty()) {
        std::cout << "\nDry run: nothing was changed under " << AbsoluteRoot(root) << ".\n";
      }
    }
    return kExitOk;
  }
  if (!out.reboot_marker_status.ok()) {
    spdlog::warn("could not write the reboot marker: {}", out.reboot_marker_status.message());
  }
  json changes = json::array();
  // When each change started (from the apply's start) and how long it took.
  auto timed = [](json j, const ChangeOutcome& c) {
    j["startMs"] = c.start.count();
    j["durationMs"] = c.duration.count();
    return j;
  };
  // Every planned change once, with its status at exit (not-attempted ones
  // have no times).
  for (const auto& c : out.final) {
    changes.push_back(c.status == ChangeStatus::kNotAttempted ? ChangeOutcomeToJson(c)
                                                              : timed(ChangeOutcomeToJson(c), c));
  }
  json rolled = json::array();
  for (const auto& r : out.rolled_back) rolled.push_back(timed(ChangeOutcomeToJson(r), r));
  doc["changes"] = changes;
  doc["rolledBack"] = rolled;
  // The host at exit: what stays applied, what was undone, what never ran.
  doc["summary"]["applied"] = out.applied;
  doc["summary"]["rolledBack"] = out.rolled_back_count;
  doc["summary"]["rollbackFailed"] = out.rollback_failed;
  doc["summary"]["failed"] = out.failed;
  doc["summary"]["notAttempted"] = out.not_attempted;
  doc["summary"]["rebootRequired"] = out.reboot_required;
  doc["summary"]["parallelism"] = out.parallelism;
  doc["summary"]["longestChain"] = out.longest_chain;
  if (!out.status.ok()) doc["error"] = out.status.message();
  if (opt.output != "table") {
    PrintDocument(doc, opt.output);
  } else {
    RenderApplyTable(out, root, opt.color, opt.rollback);
  }
  if (!out.status.ok()) {
    PrintError(out.status.message());
    if (!out.rolled_back.empty()) {
      std::fprintf(stderr, "provisioner: rolled back %zu change%s\n", out.rolled_back.size(),
                   out.rolled_back.size() == 1 ? "" : "s");
    }
    // What to do about it (an interruption's message says all).
    if (std::string next = ApplyNextStep(out.status, opt.settle_timeout_s);
        !next.empty() && InterruptGuard::count() == 0) {
      std::fprintf(stderr, "provisioner: next: %s\n", next.c_str());
    }
    if (opt.rollback && opt.file.empty() && JournalKept(root)) {  // from an old journal alone
      std::fprintf(stderr, "provisioner: next: %s\n", RollbackWithFileHint(root).c_str());
    }
    return kExitError;
  }
  return out.reboot_required ? kExitRebootRequired : kExitOk;
}

}  // namespace provisioner::cli
