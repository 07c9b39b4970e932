#include "engine/core/engine.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "engine/base/interrupt.h"
#include "spdlog/spdlog.h"

namespace provisioner {
namespace {

Module* FindModule(const std::vector<std::unique_ptr<Module>>& modules, const std::string& name) {
  for (const auto& m : modules) {
    if (m->name() == name) return m.get();
  }
  return nullptr;
}

}  // namespace

StatusOr<HostFacts> Discover(const std::vector<std::unique_ptr<Module>>& modules,
                             HostContext& ctx) {
  HostFacts facts;
  facts.root = ctx.fs->root();
  for (const auto& m : modules) {
    auto start = std::chrono::steady_clock::now();
    Status s = m->Discover(ctx, facts);
    if (!s.ok()) return s.WithContext("discover " + std::string(m->name()));
    spdlog::debug("discover: module {} took {:.1f} ms", m->name(),
                  std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                      .count());
  }
  return facts;
}

StatusOr<HostFacts> Discover(const std::vector<std::unique_ptr<Module>>& modules,
                             HostContext& ctx, const DesiredState& desired) {
  const DesiredState* outer = ctx.plan_for;
  ctx.plan_for = &desired;
  auto facts = Discover(modules, ctx);
  Status s = facts.ok() ? DiscoverForPlan(modules, ctx, desired, *facts) : OkStatus();
  ctx.plan_for = outer;
  if (!s.ok()) return s;
  return facts;
}

Status DiscoverForPlan(const std::vector<std::unique_ptr<Module>>& modules, HostContext& ctx,
                       const DesiredState& desired, HostFacts& facts) {
  for (const auto& m : modules) {
    auto start = std::chrono::steady_clock::now();
    Status s = m->DiscoverForPlan(desired, ctx, facts);
    if (!s.ok()) return s.WithContext("discover " + std::string(m->name()) + " for the plan");
    spdlog::debug("discover for the plan: module {} took {:.1f} ms", m->name(),
                  std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                      .count());
  }
  return OkStatus();
}

std::string PlanWarningText(const Diagnostic& d) {
  return d.path.empty() ? d.message : d.path + ": " + d.message;
}

PlanResult BuildPlan(const std::vector<std::unique_ptr<Module>>& modules,
                     const DesiredState& desired, const HostFacts& facts) {
  PlanResult result;
  PlanSink sink;
  for (const auto& m : modules) m->Plan(desired, facts, sink);
  result.diagnostics = sink.diagnostics();
  std::vector<Change> changes = std::move(sink.changes());
  std::stable_sort(changes.begin(), changes.end(),
                   [](const Change& a, const Change& b) { return a.phase < b.phase; });
  result.plan.changes = std::move(changes);
  result.plan.warnings = facts.warnings;
  for (const auto& d : result.diagnostics) {
    if (d.severity == Severity::kWarning) {
      result.plan.warnings.push_back(PlanWarningText(d));
    }
  }
  return result;
}

ApplyReport ApplyPlan(const std::vector<std::unique_ptr<Module>>& modules, const Plan& plan,
                      const DesiredState& desired, HostContext& ctx,
                      const ApplyOptions& options) {
  ApplyReport report;
  JournalWriter* journal = plan.changes.empty() ? nullptr : options.journal;
  // Changes come from files too (a saved plan; the journal that a rollback
  // inverts): every change must be one its module could make, before any is.
  for (size_t i = 0; i < plan.changes.size(); ++i) {
    const Change& c = plan.changes[i];
    Module* m = FindModule(modules, c.module);
    Status s = m == nullptr ? InvalidArgumentError("no module " + c.module) : m->CheckChange(c);
    if (!s.ok()) {
      report.status = s.WithContext("change " + std::to_string(i + 1) + " of the plan (" + c.id +
                                    ") refused, nothing applied");
      return report;
    }
  }
  if (journal != nullptr) {
    Status js = journal->Begin(plan.changes);
    if (!js.ok()) {
      report.status = js;  // nothing was changed yet
      return report;
    }
  }
  // No change without its journal record: a journal that cannot be written
  // fails the change (before it is made, or undone after), so that a crash
  // can always be recovered from what the journal says.
  auto mark = [&](size_t i, JournalStep step) -> Status {
    if (journal == nullptr) return OkStatus();
    return journal->Mark(i, step);
  };
  std::vector<const Change*> done;
  // Undoes `done`, newest first; the journal is settled when all came back.
  auto roll_back = [&]() {
    for (auto it = done.rbegin(); it != done.rend(); ++it) {
      Change inv = InverseChange(**it);
      Module* im = FindModule(modules, inv.module);
      Status rs = im->Apply(inv, ctx);
      if (rs.ok()) rs = im->Verify(inv, ctx);
      report.rolled_back.push_back({inv, rs});
      if (!rs.ok()) spdlog::error("rollback of {} failed: {}", (*it)->id, rs.message());
    }
    bool restored = true;
    for (const auto& r : report.rolled_back) restored = restored && r.status.ok();
    // A host that could not be restored keeps its journal for the next run.
    if (journal != nullptr && restored) {
      Status js = journal->Finish();
      if (!js.ok()) spdlog::warn("{}", js.message());
    }
  };
  // A signal (systemd stopping the unit, Ctrl-C): the change in progress
  // completes, then everything made is undone as for a failure.
  auto interrupted = [&](const std::string& where) -> bool {
    const int sig = options.interrupt != nullptr ? options.interrupt->load() : 0;
    if (sig == 0) return false;
    report.status = Status(StatusCode::kFailedPrecondition,
                           "apply interrupted by " + SignalName(sig) + " " + where + ": " +
                               std::to_string(done.size()) +
                               " applied change(s) rolled back, as for a failure");
    spdlog::error("{}", report.status.message());
    roll_back();
    return true;
  };
  for (size_t index = 0; index < plan.changes.size(); ++index) {
    const Change& c = plan.changes[index];
    if (interrupted("before " + c.id)) return report;
    Status s = mark(index, JournalStep::kApplying);
    const bool attempted = s.ok();
    Module* m = FindModule(modules, c.module);
    if (s.ok() && m == nullptr) s = InternalError("no module " + c.module);
    if (s.ok()) {
      if (ctx.progress) ctx.progress->Step(c.id + ": " + c.before.dump() + " -> " + c.after.dump());
      ctx.deferred_to_reboot.clear();
      s = m->Apply(c, ctx);
      if (s.ok() && !ctx.deferred_to_reboot.empty()) {
        // Refused now, in effect after a reboot: nothing to verify yet.
        spdlog::warn("{}: takes effect at the next reboot: {}", c.id, ctx.deferred_to_reboot);
        report.deferred.push_back({c.id, ctx.deferred_to_reboot});
        report.reboot_required = true;
        ctx.deferred_to_reboot.clear();
      } else if (s.ok()) {
        s = m->Verify(c, ctx).WithContext("verify");
      }
    }
    if (s.ok()) s = mark(index, JournalStep::kApplied);
    report.applied.push_back({c, s.ok() ? s : s.WithContext("apply " + c.id)});
    if (!s.ok()) {
      report.status = report.applied.back().status;
      // The failed change may be half-made (e.g. 0 written before N): undo
      // it too, then the earlier ones, newest first.
      if (attempted && m != nullptr) done.push_back(&c);
      roll_back();
      return report;
    }
    done.push_back(&c);
    if (c.disruption != Disruption::kLive) report.reboot_required = true;
  }
  if (interrupted("after the last change")) {
    report.reboot_required = false;
    return report;
  }
  if (journal != nullptr) {
    Status js = journal->Finish();
    if (!js.ok()) spdlog::warn("{}", js.message());
  }
  // Converged? Re-discover and re-plan: only reboot-pending changes may stay.
  if (!plan.changes.empty() && options.check_converged) {
    auto facts = Discover(modules, ctx, desired);
    if (!facts.ok()) {
      report.status = facts.status().WithContext("re-discover after apply");
      return report;
    }
    PlanResult again = BuildPlan(modules, desired, *facts);
    for (const Change& c : again.plan.changes) {
      if (c.disruption != Disruption::kLive) continue;
      bool deferred = false;
      for (const auto& d : report.deferred) deferred = deferred || d.first == c.id;
      if (deferred) continue;  // pending until the reboot, as reported
      report.status = FailedPreconditionError(
          "not converged after apply: " + c.field_path + " (" + c.id + "): desired " +
          c.after.dump() + ", current " + c.before.dump());
      break;
    }
  }
  return report;
}

}  // namespace provisioner
