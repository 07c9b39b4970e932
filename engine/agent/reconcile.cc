#include "engine/agent/reconcile.h"

#include <algorithm>
#include <set>
#include <utility>

#include "engine/output/render.h"

namespace provisioner::agent {
namespace {

using SteadyClock = std::chrono::steady_clock;

std::chrono::milliseconds Since(SteadyClock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - t);
}

// A round's plan split into what is applied now and what is left.
struct Split {
  std::vector<Change> now;
  std::vector<PendingChange> left;
  std::set<std::string> left_ids;
};

Split SplitPlan(const std::vector<Change>& changes, const std::vector<std::string>& auto_apply,
                const Backoff& backoff, const std::vector<std::string>& pending_reboot) {
  Split s;
  const auto now = SteadyClock::now();
  for (const Change& c : changes) {
    const std::string cls = DisruptionClass(c);
    std::string why;
    if (std::find(pending_reboot.begin(), pending_reboot.end(), c.id) != pending_reboot.end()) {
      why = "made; takes effect at the next boot";
    } else if (cls != "live" && cls != "link-flap") {
      why = cls + " changes are never applied by the agent";
    } else if (std::find(auto_apply.begin(), auto_apply.end(), cls) == auto_apply.end()) {
      why = cls + " is not in spec.agent.autoApply";
    } else if (backoff.Waiting(BackoffKey(c), now)) {
      why = "backoff after: " + backoff.entries().at(BackoffKey(c)).last_error;
    }
    if (why.empty()) {
      s.now.push_back(c);
    } else {
      s.left.push_back({c.id, cls, why, c.before, c.after});
      s.left_ids.insert(c.id);
    }
  }
  return s;
}

}  // namespace

std::string DisruptionClass(const Change& c) {
  if (c.disruption == Disruption::kReboot) return "reboot";
  if (c.disruption == Disruption::kFirmwareReset) return "firmware";
  // A PFC change flaps the link (ChangeAction calls that a replace too): its own class.
  if (c.link_flap) return kLinkFlapName;
  if (ChangeAction(c) == Action::kReplace) return "replace";
  return "live";
}

std::string BackoffKey(const Change& c) { return c.resource.empty() ? "host" : c.resource; }

ReconcileResult Reconcile(const ReconcileRequest& request, Backoff* backoff) {
  const auto start = SteadyClock::now();
  ReconcileResult r;
  // Each round either applies everything it tried or puts one more resource
  // in backoff, so the rounds end; the bound is a guard.
  for (int round = 0; round < 64; ++round) {
    PlanRequest plan_request;
    plan_request.file = request.file;
    plan_request.host = request.host;
    plan_request.lock = true;  // the CLI apply's lock: never interleave
    PlanOutcome planned = PlanFile(plan_request);
    if (!planned.status.ok()) {
      r.result = planned.status.code() == StatusCode::kUnavailable ? "waiting-for-lock" : "failed";
      r.error = planned.status.message();
      r.file_invalid = planned.file_invalid;
      if (planned.file_invalid) {
        for (const FileDiagnostics& d : planned.diagnostics) {
          for (const Diagnostic& item : d.items) {
            if (item.severity == Severity::kError) {
              r.error = FormatDiagnostic(request.file, d.marks, item);
              break;
            }
          }
        }
      }
      break;
    }
    r.facts = std::move(planned.facts);
    r.desired = planned.desired;
    Split split = SplitPlan(planned.plan.changes, planned.desired.agent.auto_apply, *backoff,
                            planned.plan.pending_reboot);
    r.pending = split.left;
    r.reboot_pending = !planned.plan.pending_reboot.empty();
    for (const PendingChange& p : r.pending) {
      r.reboot_pending = r.reboot_pending || p.disruption == "reboot" || p.disruption == "firmware";
    }
    if (round == 0) {
      // Drift the agent acts on; what waits for a person is counted as pending.
      for (const Change& c : split.now) ++r.drift_detected[c.module];
    }
    if (split.now.empty()) {
      r.result = !r.pending.empty() ? "pending" : r.applied_any ? "applied" : "converged";
      break;
    }
    planned.plan.changes = split.now;
    ApplyRequest apply;
    apply.parallelism = DefaultParallelism();
    planned.held_back = split.left_ids;
    const auto apply_start = SteadyClock::now();
    ApplyOutcome out = ApplyPlanned(planned, apply);
    r.apply_duration += Since(apply_start);
    if (out.status.ok()) {
      r.applied_any = true;
      for (const ChangeOutcome& c : out.changes) {
        if (c.status == ChangeStatus::kApplied || c.status == ChangeStatus::kDeferredToReboot) {
          ++r.drift_fixed[c.change.module];
          backoff->Succeed(BackoffKey(c.change));
        }
      }
      continue;  // plan again: converged, or what is left is pending
    }
    // The failed change's resource waits; the rest is planned again.
    std::string failed_key;
    for (const ChangeOutcome& c : out.changes) {
      if (c.status == ChangeStatus::kFailed) failed_key = BackoffKey(c.change);
    }
    r.error = out.status.message();
    if (failed_key.empty()) {
      // Not one change's failure (the convergence check, the journal): all wait.
      for (const Change& c : split.now) backoff->Fail(BackoffKey(c), r.error, SteadyClock::now());
    } else {
      backoff->Fail(failed_key, r.error, SteadyClock::now());
    }
    r.result = "failed";
  }
  if (r.result == "pending" && !r.error.empty()) r.result = "failed";
  r.duration = Since(start);
  return r;
}

}  // namespace provisioner::agent
