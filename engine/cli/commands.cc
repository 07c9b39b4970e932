#include "engine/cli/commands.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <vector>

#include "engine/config/loader.h"
#include "engine/core/engine.h"
#include "engine/host/host_fs.h"
#include "engine/host/host_lock.h"
#include "engine/module/registry.h"
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

// Everything a host command needs, set up once.
struct Session {
  std::unique_ptr<HostFs> fs;
  std::vector<std::unique_ptr<Module>> modules;
  // On stderr, never stdout (stdout may be JSON); redrawn on a terminal.
  ConsoleProgress progress{stderr, {.terminal = ::isatty(STDERR_FILENO) == 1}};
  HostContext ctx;
};

StatusOr<std::unique_ptr<Session>> OpenHost(const CommonOptions& opt) {
  struct stat st;
  if (::stat(opt.root.c_str(), &st) != 0) {
    return ErrnoToStatus(errno, "--root " + opt.root);
  }
  if (!S_ISDIR(st.st_mode)) return ErrnoToStatus(ENOTDIR, "--root " + opt.root);
  auto s = std::make_unique<Session>();
  s->fs = NewLocalHostFs(opt.root);
  s->modules = ModuleRegistry::CreateAll();
  s->ctx.fs = s->fs.get();
  s->ctx.clock = &RealClock();
  s->ctx.progress = &s->progress;
  s->ctx.settle_timeout =
      std::chrono::milliseconds(static_cast<long long>(opt.settle_timeout_s * 1000));
  return s;
}

// Loads host.yaml; prints every diagnostic; nullopt when there are errors.
std::optional<DesiredState> LoadOrReport(const std::string& file) {
  LoadResult r = LoadDesiredStateFromFile(file);
  for (const auto& d : r.diagnostics) {
    std::fprintf(stderr, "%s\n", FormatDiagnostic(file, r.marks, d).c_str());
  }
  if (!r.state || HasErrors(r.diagnostics)) {
    size_t n = 0;
    for (const auto& d : r.diagnostics) n += d.severity == Severity::kError;
    std::fprintf(stderr, "provisioner: %s: %zu error%s\n", file.c_str(), n, n == 1 ? "" : "s");
    return std::nullopt;
  }
  return std::move(r.state);
}

// The facts a plan depends on, without the root's path (a tree may move).
std::string FactsDigest(const HostFacts& facts) {
  json j = FactsToJson(facts);
  j.erase("root");
  return Digest(j.dump());
}

StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrnoToStatus(errno, "read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string AbsolutePath(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char cwd[4096];
  if (::getcwd(cwd, sizeof cwd) == nullptr) return path;
  return std::string(cwd) + "/" + path;
}

struct Planned {
  std::unique_ptr<Session> session;
  HostLock lock;  // held from before discovery until apply ends
  std::optional<Journal> interrupted;  // journal of an earlier, interrupted apply
  std::string facts_digest;            // of the discovered facts the plan was made from
  DesiredState desired;
  PlanResult result;
};

// validate + discover + plan, printing problems. nullopt -> exit 1.
std::optional<Planned> LoadAndPlan(const CommonOptions& opt, bool lock = false) {
  auto desired = LoadOrReport(opt.file);
  if (!desired) return std::nullopt;
  auto session = OpenHost(opt);
  if (!session.ok()) {
    PrintError(session.status().message());
    return std::nullopt;
  }
  Planned p;
  p.session = std::move(session).value();
  p.desired = std::move(*desired);
  if (lock) {
    auto l = AcquireHostLock(*p.session->fs, kApplyLockPath,
                             std::chrono::milliseconds(static_cast<long long>(opt.lock_timeout_s * 1000)));
    if (!l.ok()) {
      PrintError(l.status().message());
      return std::nullopt;
    }
    p.lock = std::move(l).value();
  }
  // For planning: modules may skip facts no Plan reads (HostContext::plan_for).
  auto facts = Discover(p.session->modules, p.session->ctx, p.desired);
  if (!facts.ok()) {
    PrintError(facts.status().message());
    return std::nullopt;
  }
  if (!ExpandRailsForHost(opt.file, *facts, &p.desired)) return std::nullopt;
  p.result = BuildPlan(p.session->modules, p.desired, *facts);
  p.result.diagnostics = AttributeToRails(p.desired, std::move(p.result.diagnostics));
  p.facts_digest = FactsDigest(*facts);
  auto journal = ReadJournal(*p.session->fs);
  if (!journal.ok()) {
    PrintError(journal.status().message());
    return std::nullopt;
  }
  if (*journal) {
    p.interrupted = std::move(**journal);
    p.result.plan.warnings.push_back(
        "an earlier apply was interrupted (" + p.interrupted->Describe() +
        "); apply converges from the current state, apply --rollback undoes it");
  }
  bool errors = false;
  for (const auto& d : p.result.diagnostics) {
    std::fprintf(stderr, "%s\n", FormatDiagnostic(opt.file, p.desired.marks, d).c_str());
    errors = errors || d.severity == Severity::kError;
  }
  if (errors) return std::nullopt;
  return p;
}

// Applies a saved plan only when neither host.yaml nor the host changed.
std::optional<Planned> LoadSavedPlan(const CommonOptions& given, const SavedPlan& saved) {
  CommonOptions opt = given;
  if (!opt.root_given) opt.root = saved.root;
  opt.file = saved.desired_file;
  auto bytes = ReadWholeFile(opt.file);
  if (!bytes.ok()) {
    PrintError("saved plan " + given.file + ": its host.yaml <- " + bytes.status().message());
    return std::nullopt;
  }
  if (Digest(*bytes) != saved.desired_digest) {
    PrintError("refusing saved plan " + given.file + ": " + opt.file +
               " changed since the plan was made (desired-state digest " + saved.desired_digest +
               ", now " + Digest(*bytes) + "); run plan again");
    return std::nullopt;
  }
  auto p = LoadAndPlan(opt, /*lock=*/!opt.dry_run);
  if (!p) return std::nullopt;
  if (p->facts_digest != saved.facts_digest) {
    PrintError("refusing saved plan " + given.file + ": the host under " + opt.root +
               " changed since the plan was made (facts digest " + saved.facts_digest + ", now " +
               p->facts_digest + "); run plan again");
    return std::nullopt;
  }
  // Apply exactly the saved changes, each by a module this binary has.
  for (const auto& c : saved.changes) {
    bool known = false;
    for (const auto& m : p->session->modules) known = known || m->name() == c.module;
    if (!known) {
      PrintError("saved plan " + given.file + ": change " + c.id + " needs module " + c.module +
                 ", which this provisioner does not have");
      return std::nullopt;
    }
  }
  p->result.plan.changes = saved.changes;
  return p;
}

Status WriteRebootMarker(HostFs& fs) {
  RETURN_IF_ERROR(fs.WriteFileAtomic("/run/reboot-required", "*** System restart required ***\n"));
  std::string pkgs;
  if (auto cur = fs.ReadFile("/run/reboot-required.pkgs"); cur.ok()) pkgs = *cur;
  if (pkgs.find("provisioner\n") == std::string::npos) {
    RETURN_IF_ERROR(fs.WriteFileAtomic("/run/reboot-required.pkgs", pkgs + "provisioner\n"));
  }
  return OkStatus();
}

// Why the kernel deferred a change to the next boot ("" when it did not).
std::string DeferredWhy(const ApplyReport& report, const std::string& id) {
  for (const auto& [deferred_id, why] : report.deferred) {
    if (deferred_id == id) return why;
  }
  return "";
}

}  // namespace

std::optional<HostFacts> DiscoverHost(const CommonOptions& opt) {
  auto session = OpenHost(opt);
  if (!session.ok()) {
    PrintError(session.status().message());
    return std::nullopt;
  }
  auto facts = Discover((*session)->modules, (*session)->ctx);
  if (!facts.ok()) {
    PrintError(facts.status().message());
    return std::nullopt;
  }
  return std::move(facts).value();
}

int RunDiscover(const CommonOptions& opt) {
  auto session = OpenHost(opt);
  if (!session.ok()) {
    PrintError(session.status().message());
    return kExitError;
  }
  auto facts = Discover((*session)->modules, (*session)->ctx);
  if (!facts.ok()) {
    PrintError(facts.status().message());
    return kExitError;
  }
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
  auto p = LoadAndPlan(opt);
  if (!p) return kExitError;
  const Plan& plan = p->result.plan;
  if (!opt.plan_out.empty()) {
    auto bytes = ReadWholeFile(opt.file);
    json saved = PlanToJson(plan, opt.root);
    saved["kind"] = kSavedPlanKind;
    saved["desiredFile"] = AbsolutePath(opt.file);
    saved["digests"] = {{"desired", bytes.ok() ? Digest(*bytes) : ""}, {"facts", p->facts_digest}};
    json records = json::array();
    for (const auto& c : plan.changes) records.push_back(ChangeToRecord(c));
    saved["changes"] = records;
    std::ofstream out(opt.plan_out, std::ios::trunc);
    out << saved.dump(2) << "\n";
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
    std::cout << RenderPlanTable(plan, opt.color);
  }
  if (opt.detailed_exitcode && !plan.changes.empty()) return kExitChangesPending;
  return kExitOk;
}

int RunApply(const CommonOptions& opt) {
  // A saved plan (plan --out) or a host.yaml.
  std::optional<SavedPlan> saved;
  if (auto text = ReadWholeFile(opt.file); text.ok()) {
    auto parsed = ParseSavedPlan(*text);
    if (!parsed.ok()) {
      PrintError("saved plan " + opt.file + " is malformed: " + parsed.status().message());
      return kExitError;
    }
    saved = std::move(parsed).value();
  }
  auto p = saved ? LoadSavedPlan(opt, *saved) : LoadAndPlan(opt, /*lock=*/!opt.dry_run);
  if (!p) return kExitError;
  JournalWriter journal(p->session->fs.get());
  ApplyOptions apply_options;
  apply_options.journal = &journal;
  if (opt.rollback) {
    if (!p->interrupted) {
      std::printf("Nothing to roll back: no interrupted apply under %s.\n", opt.root.c_str());
      return kExitOk;
    }
    std::fprintf(stderr, "provisioner: rolling back the interrupted apply (%s)\n",
                 p->interrupted->Describe().c_str());
    p->result.plan.changes = p->interrupted->RollbackChanges();
    p->result.plan.warnings.clear();
    apply_options.check_converged = false;
    if (p->result.plan.changes.empty()) {
      Status s = journal.Finish();
      if (!s.ok()) PrintError(s.message());
      std::printf("Nothing to roll back: the interrupted apply had not changed anything.\n");
      return s.ok() ? kExitOk : kExitError;
    }
  }
  const Plan& plan = p->result.plan;
  for (const auto& w : plan.warnings) spdlog::warn("{}", w);
  json doc = PlanToJson(plan, opt.root);
  doc["dryRun"] = opt.dry_run;
  if (opt.dry_run || plan.changes.empty()) {
    if (!opt.dry_run && p->interrupted) {
      // Already converged: the interrupted apply's journal is settled.
      Status s = journal.Finish();
      if (!s.ok()) PrintError(s.message());
    }
    for (auto& c : doc["changes"]) c["status"] = "planned";
    if (opt.output == "json") {
      std::cout << doc.dump(2) << "\n";
    } else {
      if (opt.dry_run && !plan.changes.empty()) std::cout << "Dry run: nothing was changed.\n";
      std::cout << RenderPlanTable(plan, opt.color);
    }
    return kExitOk;
  }

  ApplyReport report =
      ApplyPlan(p->session->modules, plan, p->desired, p->session->ctx, apply_options);
  p->session->progress.Finish();  // results start on a clean line
  json changes = json::array();
  for (const auto& a : report.applied) {
    json c = ChangeToJson(a.change);
    c["status"] = a.status.ok() ? "applied" : "failed";
    if (!a.status.ok()) c["error"] = a.status.message();
    for (const auto& [id, why] : report.deferred) {
      if (id == a.change.id && a.status.ok()) {
        c["status"] = "deferred-to-reboot";  // refused now by the kernel
        c["note"] = why;
      }
    }
    changes.push_back(c);
  }
  json rolled = json::array();
  for (const auto& r : report.rolled_back) {
    json c = ChangeToJson(r.change);
    c["status"] = r.status.ok() ? "rolled-back" : "rollback-failed";
    if (!r.status.ok()) c["error"] = r.status.message();
    rolled.push_back(c);
  }
  doc["changes"] = changes;
  doc["rolledBack"] = rolled;
  doc["summary"]["applied"] = report.status.ok() ? report.applied.size() : report.applied.size() - 1;
  doc["summary"]["rebootRequired"] = report.reboot_required;
  if (!report.status.ok()) doc["error"] = report.status.message();

  if (report.status.ok() && report.reboot_required) {
    Status s = WriteRebootMarker(*p->session->fs);
    if (!s.ok()) spdlog::warn("could not write the reboot marker: {}", s.message());
  }

  if (opt.output == "json") {
    std::cout << doc.dump(2) << "\n";
  } else {
    for (const auto& a : report.applied) {
      std::cout << "  " << ChangeSymbol(a.change) << " " << a.change.id << ": "
                << a.change.before.dump() << " -> " << a.change.after.dump() << "  "
                << (!a.status.ok()                               ? "FAILED"
                    : DeferredWhy(report, a.change.id).empty() ? "done, verified"
                                                               : "done, takes effect at the next reboot")
                << "\n";
      std::string why = DeferredWhy(report, a.change.id);
      if (!why.empty()) std::cout << "      # " << why << "\n";
    }
    for (const auto& r : report.rolled_back) {
      std::cout << "  rolled back " << r.change.id << " to " << r.change.after.dump()
                << (r.status.ok() ? "" : "  (ROLLBACK FAILED: " + r.status.message() + ")")
                << "\n";
    }
    if (report.status.ok()) {
      std::cout << "Apply complete: " << report.applied.size() << " change"
                << (report.applied.size() == 1 ? "" : "s") << " made and verified.\n";
      if (report.reboot_required) std::cout << "A reboot is required for some changes to take effect.\n";
    }
  }
  if (!report.status.ok()) {
    PrintError(report.status.message());
    if (!report.rolled_back.empty()) {
      std::fprintf(stderr, "provisioner: rolled back %zu change%s\n", report.rolled_back.size(),
                   report.rolled_back.size() == 1 ? "" : "s");
    }
    return kExitError;
  }
  return report.reboot_required ? kExitRebootRequired : kExitOk;
}

}  // namespace provisioner::cli
