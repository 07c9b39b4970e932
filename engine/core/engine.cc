#include "engine/core/engine.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string_view>

#include "engine/base/interrupt.h"
#include "engine/host/parallel_reads.h"
#include "engine/module/managed_file.h"
#include "engine/plan/change_text.h"
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
    spdlog::debug(
        "discover: module {} took {:.1f} ms", m->name(),
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  return facts;
}

StatusOr<HostFacts> Discover(const std::vector<std::unique_ptr<Module>>& modules, HostContext& ctx,
                             const DesiredState& desired) {
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
    spdlog::debug(
        "discover for the plan: module {} took {:.1f} ms", m->name(),
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
  result.plan.unmanaged_pfs_with_vfs = sink.unmanaged_pfs_with_vfs();
  result.plan.set_for_next_boot = std::move(sink.set_for_next_boot());
  for (const auto& d : result.diagnostics) {
    if (d.severity == Severity::kWarning) {
      result.plan.warnings.push_back(PlanWarningText(d));
    }
  }
  return result;
}

namespace {

// A module's progress while change `key` runs: its steps go to that change's line.
class ChangeProgress final : public Progress {
 public:
  ChangeProgress(Progress* parent, size_t key) : parent_(parent), key_(key) {}
  void Step(std::string_view message) override { parent_->ChangeStep(key_, message); }
  void Waiting(std::string_view message, std::chrono::milliseconds limit) override {
    parent_->ChangeWaiting(key_, message, limit);
  }

 private:
  Progress* parent_;
  size_t key_;
};

// Runs run(i) for every node i with include[i], each once every node it
// waits_for (among the included) has run and returned true, on up to
// `workers` threads (ForEachIndexWaiting: the caller's among them; 1 runs
// on the caller alone). Of the ready nodes the lowest index starts first
// (the highest with `highest_first`), so one worker walks plan order (its
// reverse). Once run returns false or stop(i) says so before node i would
// start, no node starts; the running ones finish. Nothing busy-waits: idle
// workers sleep on a condition variable.
void WalkGraph(const std::vector<std::vector<size_t>>& waits_for,
               const std::vector<std::vector<size_t>>& releases, const std::vector<bool>& include,
               bool highest_first, size_t workers, const std::function<bool(size_t)>& run,
               const std::function<bool(size_t)>& stop) {
  const size_t n = include.size();
  std::mutex mu;
  std::condition_variable cv;
  std::vector<size_t> remaining(n, 0);
  std::set<size_t> ready;
  for (size_t i = 0; i < n; ++i) {
    if (!include[i]) continue;
    for (size_t j : waits_for[i]) remaining[i] += include[j] ? 1 : 0;
    if (remaining[i] == 0) ready.insert(i);
  }
  size_t running = 0;
  bool stopping = false;
  auto worker = [&](size_t) {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      if (!stopping && !ready.empty()) {
        const size_t next = highest_first ? *ready.rbegin() : *ready.begin();
        if (stop(next)) {
          stopping = true;
          cv.notify_all();
        } else {
          ready.erase(next);
          ++running;
          lock.unlock();
          const bool ok = run(next);
          lock.lock();
          --running;
          if (!ok) stopping = true;
          if (ok) {
            for (size_t s : releases[next]) {
              if (include[s] && --remaining[s] == 0) ready.insert(s);
            }
          }
          cv.notify_all();
          continue;
        }
      }
      // Nothing to start: done when nothing runs, else wait for a release.
      if (running == 0) {
        cv.notify_all();
        return;
      }
      cv.wait(lock);
    }
  };
  ForEachIndexWaiting(workers, workers, worker);
}

}  // namespace

size_t DefaultParallelism() {
  cpu_set_t set;
  size_t cpus = 1;
  if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = static_cast<size_t>(CPU_COUNT(&set));
  return std::min<size_t>(64, std::max<size_t>(16, cpus));
}

namespace {

ApplyReport ApplyRound(const std::vector<std::unique_ptr<Module>>& modules, const Plan& plan,
                       const DesiredState& desired, HostContext& ctx, const ApplyOptions& options) {
  ApplyReport report;
  JournalWriter* journal = plan.changes.empty() ? nullptr : options.journal;
  const size_t n = plan.changes.size();
  // Changes come from files too (a saved plan; the journal that a rollback
  // inverts): every change must be one its module could make, before any is.
  for (size_t i = 0; i < n; ++i) {
    const Change& c = plan.changes[i];
    Module* m = FindModule(modules, c.module);
    Status s = m == nullptr ? InvalidArgumentError("no module " + c.module) : m->CheckChange(c);
    if (!s.ok()) {
      report.status = s.WithContext("change " + std::to_string(i + 1) + " of the plan (" + c.id +
                                    ") refused, nothing applied");
      return report;
    }
  }
  auto graph = BuildPlanGraph(plan.changes);
  if (!graph.ok()) {
    report.status = graph.status().WithContext("the plan's dependencies refused, nothing applied");
    return report;
  }
  report.longest_chain = graph->longest_chain;
  const size_t workers = std::max<size_t>(1, std::min(options.parallelism, n));
  report.parallelism = workers;
  if (journal != nullptr) {
    Status js = journal->Begin(plan.changes);
    if (!js.ok()) {
      report.status = js;  // nothing was changed yet
      return report;
    }
  }
  // No change without its journal record: a journal that cannot be written
  // fails the change (before it is made, or undone after), so that a crash
  // can always be recovered from what the journal says. Each record is the
  // whole journal (JournalWriter serializes concurrent marks), so several
  // entries may be "applying" at once.
  auto mark = [&](size_t i, JournalStep step, const nlohmann::json& prior = nullptr) -> Status {
    if (journal == nullptr) return OkStatus();
    return journal->Mark(i, step, prior);
  };
  // Per change, the file it declares as it was before it ran
  // (managed_file.h): what its rollback restores. Each slot is written by
  // the one worker of its change, read by the rollback after every worker.
  std::vector<nlohmann::json> prior_files(n);
  // Modules that are not ConcurrentApply run one change at a time.
  std::map<const Module*, std::unique_ptr<std::mutex>> serial;
  for (const auto& m : modules) {
    if (!m->ConcurrentApply()) serial[m.get()] = std::make_unique<std::mutex>();
  }
  auto serialize = [&](const Module* m) {
    auto it = serial.find(m);
    return workers > 1 && it != serial.end() ? std::unique_lock<std::mutex>(*it->second)
                                             : std::unique_lock<std::mutex>();
  };
  using SteadyClock = std::chrono::steady_clock;
  const auto t0 = SteadyClock::now();
  auto ms = [](SteadyClock::duration d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d);
  };
  std::mutex report_mu;      // report, done, failed
  std::vector<size_t> done;  // made (or half-made), in the order they finished
  bool failed = false;
  int interrupt_signal = 0;
  std::string interrupted_before;  // the change that would have started next
  std::vector<std::string> interrupted_during;  // changes whose waits a signal ended

  auto apply_one = [&](size_t index) -> bool {
    const Change& c = plan.changes[index];
    const auto start = SteadyClock::now();
    auto capture = CaptureManagedFile(*ctx.fs, c);
    Status s = capture.status();
    if (s.ok()) {
      prior_files[index] = *capture;
      s = mark(index, JournalStep::kApplying, *capture);
    }
    const bool attempted = s.ok();
    Module* m = FindModule(modules, c.module);
    if (s.ok() && m == nullptr) s = InternalError("no module " + c.module);
    std::string deferred;
    if (s.ok()) {
      // Each change its own context: deferred_to_reboot and progress are per change.
      HostContext task = ctx;
      task.deferred_to_reboot.clear();
      task.interrupt = options.interrupt;  // a signal ends this change's waits at once
      ChangeProgress progress(ctx.progress, index);
      if (ctx.progress != nullptr) {
        task.progress = &progress;
        ctx.progress->ChangeStarted(index, ChangeText(c));
      }
      auto lock = serialize(m);
      s = m->Apply(c, task);
      if (s.ok() && !task.deferred_to_reboot.empty()) {
        // Refused now, in effect after a reboot: nothing to verify yet.
        deferred = task.deferred_to_reboot;
        spdlog::warn("{}: takes effect at the next reboot: {}", c.id, deferred);
      } else if (s.ok()) {
        s = m->Verify(c, task).WithContext("verify");
      }
    }
    if (s.ok()) s = mark(index, JournalStep::kApplied);
    const auto end = SteadyClock::now();
    if (ctx.progress != nullptr && attempted && m != nullptr) {
      // The plan's wording: "sriov 0000:af:00.0 numVfs: 0 -> 12".
      ctx.progress->ChangeFinished(index, ChangeText(c), s.ok());
    }
    std::lock_guard<std::mutex> lock(report_mu);
    report.applied.push_back(
        {c, s.ok() ? s : s.WithContext("apply " + c.id), ms(start - t0), ms(end - start)});
    if (!deferred.empty()) {
      report.deferred.push_back({c.id, deferred});
      report.reboot_required = true;
    }
    if (!s.ok()) {
      // The first failure is the apply's; the failed change may be
      // half-made (e.g. 0 written before N): it is undone too. One that
      // failed once a signal came (its wait ended by it) was interrupted.
      const int sig = options.interrupt != nullptr ? options.interrupt->load() : 0;
      if (sig != 0 && report.status.ok()) {
        interrupt_signal = sig;
        interrupted_during.push_back(c.id);
      } else if (!failed) {
        report.status = report.applied.back().status;
      }
      failed = true;
      if (attempted && m != nullptr) done.push_back(index);
      return false;
    }
    done.push_back(index);
    // A firmware-reset change takes effect when the reset change made it so;
    // one the reset could not make is deferred (above) and needs the reboot.
    if (c.disruption == Disruption::kReboot) report.reboot_required = true;
    return true;
  };
  // A signal (systemd stopping the unit, Ctrl-C): the changes in progress
  // complete, then everything made is undone as for a failure.
  auto stop_before = [&](size_t index) -> bool {
    const int sig = options.interrupt != nullptr ? options.interrupt->load() : 0;
    if (sig == 0) return false;
    std::lock_guard<std::mutex> lock(report_mu);
    interrupt_signal = sig;
    interrupted_before = plan.changes[index].id;
    return true;
  };
  // Undoes `done` in reverse dependency order: a change after every made
  // change that depended on it; the journal is settled when all came back.
  auto roll_back = [&]() {
    std::vector<bool> include(n, false);
    for (size_t i : done) include[i] = true;
    auto undo_one = [&](size_t index) -> bool {
      const auto start = SteadyClock::now();
      Change inv = InverseChange(plan.changes[index], prior_files[index]);
      Module* im = FindModule(modules, inv.module);
      HostContext task = ctx;
      task.deferred_to_reboot.clear();
      Status rs;
      {
        auto lock = serialize(im);
        rs = im->Apply(inv, task);
        if (rs.ok()) rs = im->Verify(inv, task);
      }
      if (!rs.ok())
        spdlog::error("rollback of {} failed: {}", plan.changes[index].id, rs.message());
      std::lock_guard<std::mutex> lock(report_mu);
      report.rolled_back.push_back({inv, rs, ms(start - t0), ms(SteadyClock::now() - start)});
      return true;  // a failed undo does not stop the others
    };
    WalkGraph(graph->succs, graph->preds, include, /*highest_first=*/true, workers, undo_one,
              [](size_t) { return false; });
    bool restored = true;
    for (const auto& r : report.rolled_back) restored = restored && r.status.ok();
    // A host that could not be restored keeps its journal for the next run.
    if (journal != nullptr && restored) {
      Status js = journal->Finish();
      if (!js.ok()) spdlog::warn("{}", js.message());
    }
  };
  auto interrupted = [&](const std::string& where) {
    report.status = Status(StatusCode::kFailedPrecondition,
                           "apply interrupted by " + SignalName(interrupt_signal) + " " + where +
                               ": " + std::to_string(done.size()) +
                               " applied change(s) rolled back, as for a failure");
    spdlog::error("{}", report.status.message());
    roll_back();
  };
  WalkGraph(graph->preds, graph->succs, std::vector<bool>(n, true), /*highest_first=*/false,
            workers, apply_one, stop_before);
  if (failed && report.status.ok() && !interrupted_during.empty()) {
    std::string ids;
    for (const std::string& id : interrupted_during) ids += (ids.empty() ? "" : ", ") + id;
    interrupted("during " + ids);
    return report;
  }
  if (failed) {
    roll_back();
    return report;
  }
  if (interrupt_signal != 0) {
    interrupted("before " + interrupted_before);
    return report;
  }
  if (options.interrupt != nullptr && options.interrupt->load() != 0) {
    interrupt_signal = options.interrupt->load();
    interrupted("after the last change");
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
      if (options.held_back != nullptr && options.held_back->count(c.id) != 0) continue;
      bool deferred = false;
      for (const auto& d : report.deferred) deferred = deferred || d.first == c.id;
      if (deferred) continue;  // pending until the reboot, as reported
      report.status =
          FailedPreconditionError("not converged after apply: " + c.field_path + " (" + c.id +
                                  "): desired " + c.after.dump() + ", current " + c.before.dump());
      break;
    }
  }
  return report;
}

}  // namespace

// A firmware reset reloads the card's firmware and its driver: the card's
// VFs, their settings and the PFs' running settings go, so whatever the plan
// said about them was planned against a host that is no more. Apply then
// runs in two rounds: the changes up to the last firmware-reset one (the
// firmware phase), then the plan made anew from the re-discovered host
// (what the reset took away: VFs, settings), without the changes round one
// made. A failure in round two rolls back round two; round one stays (the
// card runs the configuration host.yaml asks for; a reset cannot be undone).
ApplyReport ApplyPlan(const std::vector<std::unique_ptr<Module>>& modules, const Plan& plan,
                      const DesiredState& desired, HostContext& ctx, const ApplyOptions& options) {
  size_t cut = plan.changes.size();
  for (size_t i = 0; i < plan.changes.size(); ++i) {
    if (plan.changes[i].disruption == Disruption::kFirmwareReset) cut = i;
  }
  // No reset, or a rollback (it moves away from host.yaml: nothing to re-plan).
  if (cut == plan.changes.size() || !options.check_converged) {
    return ApplyRound(modules, plan, desired, ctx, options);
  }
  Plan first;
  first.changes.assign(plan.changes.begin(), plan.changes.begin() + static_cast<long>(cut) + 1);
  ApplyOptions round_one = options;
  round_one.check_converged = false;
  ApplyReport report = ApplyRound(modules, first, desired, ctx, round_one);
  if (!report.status.ok()) return report;
  auto facts = Discover(modules, ctx, desired);
  if (!facts.ok()) {
    report.status = facts.status().WithContext("re-discover after the firmware reset");
    return report;
  }
  PlanResult again = BuildPlan(modules, desired, *facts);
  for (const Diagnostic& d : again.diagnostics) {
    if (d.severity != Severity::kError) continue;
    report.status = FailedPreconditionError(
        "after the firmware reset, the rest of the plan: " + d.path + ": " + d.message);
    return report;
  }
  std::set<std::string> made;
  for (const AppliedChange& a : report.applied) made.insert(a.change.id);
  Plan rest;
  for (Change& c : again.plan.changes) {
    // What round one made (or deferred to the reboot) is not made again.
    if (c.disruption != Disruption::kLive && made.count(c.id) != 0) continue;
    rest.changes.push_back(std::move(c));
  }
  spdlog::info("after the firmware reset: {} change(s) planned anew", rest.changes.size());
  ApplyReport two = ApplyRound(modules, rest, desired, ctx, options);
  for (auto& a : two.applied) report.applied.push_back(std::move(a));
  for (auto& r : two.rolled_back) report.rolled_back.push_back(std::move(r));
  for (auto& d : two.deferred) report.deferred.push_back(std::move(d));
  report.reboot_required = report.reboot_required || two.reboot_required;
  report.parallelism = std::max(report.parallelism, two.parallelism);
  report.longest_chain = std::max(report.longest_chain, two.longest_chain);
  if (!two.status.ok()) {
    report.status = two.status.WithContext(
        "after the firmware reset (which stays: the cards run what host.yaml asks)");
  }
  return report;
}

}  // namespace provisioner
