// Applying a plan with its journal, and the typed outcome (session.h).
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "engine/base/enum_names.h"
#include "engine/base/interrupt.h"
#include "engine/core/session.h"

namespace provisioner {
namespace {

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

const char* ChangeStatusName(ChangeStatus s) {
  static constexpr EnumName<ChangeStatus> kNames[] = {
      {ChangeStatus::kPlanned, "planned"},
      {ChangeStatus::kApplied, "applied"},
      {ChangeStatus::kDeferredToReboot, "deferred-to-reboot"},
      {ChangeStatus::kFailed, "failed"},
      {ChangeStatus::kRolledBack, "rolled-back"},
      {ChangeStatus::kRollbackFailed, "rollback-failed"},
      {ChangeStatus::kNotAttempted, "not-attempted"},
  };
  return NameOf(kNames, s, "planned");
}

bool UseRollbackPlan(PlanOutcome* planned) {
  if (!planned->interrupted) return false;
  planned->plan.changes = planned->interrupted->RollbackChanges();
  planned->plan.warnings.clear();
  return true;
}

namespace {

// The count of ApplyOutcome a change's status at exit adds to.
size_t ApplyOutcome::*CountOf(ChangeStatus s) {
  switch (s) {
    case ChangeStatus::kApplied:
    case ChangeStatus::kDeferredToReboot:
      return &ApplyOutcome::applied;
    case ChangeStatus::kRolledBack:
      return &ApplyOutcome::rolled_back_count;
    case ChangeStatus::kRollbackFailed:
      return &ApplyOutcome::rollback_failed;
    case ChangeStatus::kFailed:
      return &ApplyOutcome::failed;
    default:
      return &ApplyOutcome::not_attempted;
  }
}

// ApplyOutcome::final and the counts of the host at exit.
void SettleFinal(const Plan& plan, ApplyOutcome* out) {
  std::map<std::string, const ChangeOutcome*> ran;  // by id: the last run of it
  for (const auto& c : out->changes) ran[c.change.id] = &c;
  std::map<std::string, const ChangeOutcome*> undone;
  for (const auto& r : out->rolled_back) undone[r.change.id] = &r;
  std::set<std::string> listed;
  auto settle = [&](const Change& planned) {
    if (!listed.insert(planned.id).second) return;
    ChangeOutcome f{planned, ChangeStatus::kNotAttempted, "", ""};
    if (auto it = ran.find(planned.id); it != ran.end()) {
      f = *it->second;
      auto u = undone.find(planned.id);
      if (f.status != ChangeStatus::kFailed && u != undone.end()) {
        f.status = u->second->status;  // rolled-back or rollback-failed
        f.error = u->second->error;
      }
    }
    ++(out->*CountOf(f.status));
    out->final.push_back(std::move(f));
  };
  for (const Change& c : plan.changes) settle(c);
  for (const auto& c : out->changes) settle(c.change);  // a firmware reset's second round
}

}  // namespace

ApplyOutcome OutcomeOf(const ApplyReport& report, const Plan& plan) {
  ApplyOutcome out;
  out.ran = true;
  out.status = report.status;
  out.reboot_required = report.reboot_required;
  out.parallelism = report.parallelism;
  out.longest_chain = report.longest_chain;
  for (const auto& a : report.applied) {
    ChangeOutcome c{a.change, ChangeStatus::kApplied, "", "", a.start, a.duration};
    c.note = DeferredWhy(report, a.change.id);
    if (!a.status.ok()) {
      c.status = ChangeStatus::kFailed;
      c.error = a.status.message();
    } else {
      c.status = c.note.empty() ? ChangeStatus::kApplied : ChangeStatus::kDeferredToReboot;
    }
    out.changes.push_back(std::move(c));
  }
  for (const auto& r : report.rolled_back) {
    ChangeOutcome c{r.change, ChangeStatus::kRolledBack, "", "", r.start, r.duration};
    c.status = r.status.ok() ? ChangeStatus::kRolledBack : ChangeStatus::kRollbackFailed;
    if (!r.status.ok()) c.error = r.status.message();
    out.rolled_back.push_back(std::move(c));
  }
  SettleFinal(plan, &out);
  return out;
}

ApplyOutcome ApplyPlanned(PlanOutcome& planned, const ApplyRequest& request) {
  Host& host = *planned.host;
  const Plan& plan = planned.plan;
  JournalWriter journal(host.fs.get());
  // Its host.yaml, for `apply --rollback` without FILE (journal.h).
  if (!planned.desired.file.empty()) {
    std::error_code ec;
    const std::filesystem::path abs = std::filesystem::absolute(planned.desired.file, ec);
    journal.set_host_yaml(ec ? planned.desired.file : abs.lexically_normal().string());
  }
  ApplyOutcome out;
  if ((request.rollback && plan.changes.empty()) ||
      (!request.dry_run && plan.changes.empty() && planned.interrupted)) {
    // Nothing to undo, or already converged: the interrupted apply's journal is settled.
    out.journal_status = journal.Finish();
    planned.lock.Keep();  // the tree had a journal: an apply ran here
    return out;
  }
  if (request.dry_run || plan.changes.empty()) {
    for (const auto& c : plan.changes) out.changes.push_back({c, ChangeStatus::kPlanned, "", ""});
    return out;
  }
  InterruptGuard guard;  // SIGTERM/SIGINT/SIGHUP: roll back, do not die half-applied
  // A second one: out at once, the journal kept for `apply --rollback`.
  const std::string& root = host.fs->root();
  const bool live = root == "/";
  SecondSignalExit second("exiting now, without finishing; the journal " + (live ? "" : root) +
                              kJournalPath + " is kept: `provisioner apply --rollback" +
                              (live ? "" : " --root " + root) + "` undoes what was changed",
                          1);
  ApplyOptions options;
  options.journal = &journal;
  options.interrupt = &InterruptGuard::signal();
  options.check_converged = !request.rollback;  // a rollback moves away from host.yaml
  options.parallelism = request.parallelism;
  options.held_back = &planned.held_back;
  out = OutcomeOf(ApplyPlan(host.modules, plan, planned.desired, host.ctx, options), plan);
  // The lock file a first apply created stays once the apply wrote to the
  // tree; refused before that (and a dry run, nothing to do) it goes on
  // release, and the tree is as it was (HostLock).
  if (journal.begun()) planned.lock.Keep();
  if (out.status.ok() && out.reboot_required) {
    out.reboot_marker_status = WriteRebootMarker(*host.fs);
    // What plan shows as pending until the reboot (PlanFile).
    nlohmann::json pending = nlohmann::json::array();
    for (const auto& c : out.changes) {
      if (c.status == ChangeStatus::kDeferredToReboot) {
        pending.push_back({{"id", c.change.id}, {"after", c.change.after}});
      }
    }
    if (out.reboot_marker_status.ok() && !pending.empty()) {
      out.reboot_marker_status =
          host.fs->WriteFileAtomic(kPendingRebootPath, pending.dump() + "\n");
    }
  }
  return out;
}

}  // namespace provisioner
