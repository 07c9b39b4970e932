// The engine: discovery across modules, planning, apply with verify and
// rollback. Knows modules only through the Module interface.
#ifndef PROVISIONER_ENGINE_CORE_ENGINE_H_
#define PROVISIONER_ENGINE_CORE_ENGINE_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/base/status.h"
#include "engine/core/journal.h"
#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/module/module.h"
#include "engine/plan/change.h"

namespace provisioner {

// Runs every module's Discover in registry order.
StatusOr<HostFacts> Discover(const std::vector<std::unique_ptr<Module>>& modules, HostContext& ctx);
// The same, for planning `desired`: HostContext::plan_for is set meanwhile,
// so modules may leave out facts no Plan reads for it; then DiscoverForPlan.
StatusOr<HostFacts> Discover(const std::vector<std::unique_ptr<Module>>& modules, HostContext& ctx,
                             const DesiredState& desired);
// Every module's DiscoverForPlan in registry order: the facts a Plan of
// `desired` reads that Discover left out. Again after spec.rails count:
// allGpus is expanded (the expanded nics may ask for more).
Status DiscoverForPlan(const std::vector<std::unique_ptr<Module>>& modules, HostContext& ctx,
                       const DesiredState& desired, HostFacts& facts);

struct PlanResult {
  Plan plan;
  std::vector<Diagnostic> diagnostics;  // errors block apply
};

// A warning diagnostic as the plan's `warnings` list holds it ("path: message").
std::string PlanWarningText(const Diagnostic& d);

// Pure: every module's Plan, then the changes in apply order (phase, then the
// order modules produced them).
PlanResult BuildPlan(const std::vector<std::unique_ptr<Module>>& modules,
                     const DesiredState& desired, const HostFacts& facts);

struct AppliedChange {
  Change change;
  Status status;  // ok, or why it failed
  // When it started, from the start of the apply, and how long it took
  // (apply and verify): a slow card stands out.
  std::chrono::milliseconds start{0};
  std::chrono::milliseconds duration{0};
};

struct ApplyReport {
  std::vector<AppliedChange> applied;      // in the order they finished
  std::vector<AppliedChange> rolled_back;  // inverse changes run after a failure
  Status status;                           // first failure (with context), or ok
  bool reboot_required = false;
  // Changes the kernel refused now that take effect after a reboot: (id, why).
  std::vector<std::pair<std::string, std::string>> deferred;
  size_t parallelism = 1;    // changes run at once at most
  size_t longest_chain = 0;  // the plan graph's longest dependency chain
};

// Applies `plan` as its dependency graph (BuildPlanGraph): a change starts
// when every change it depends on is applied and verified, with at most
// `parallelism` running at once (the lowest plan index first, so 1 is plan
// order, change by change); apply, then verify (re-read). On the first
// failure no change starts, the running ones finish, and every change made
// is undone in reverse dependency order, independent ones at once (each undo
// is the change with before/after swapped; at parallelism 1, newest first). After a full apply, the
// host is re-discovered and re-planned: anything still pending (other than reboot-pending changes)
// fails the apply.
struct ApplyOptions {
  JournalWriter* journal = nullptr;  // records progress when set
  bool check_converged = true;       // off for --rollback (it moves away from desired)
  // A signal number set asynchronously (InterruptGuard::signal()): checked
  // before each change and after the last; when set, what was applied is
  // rolled back as for a failed change and the status says which signal.
  const std::atomic<int>* interrupt = nullptr;
  // Changes applied at once at most (--parallelism); 1: one after another.
  size_t parallelism = 1;
  // Ids of changes left out of the plan on purpose (the agent's pending
  // ones): the convergence check does not fail on them.
  const std::set<std::string>* held_back = nullptr;
};

// The default --parallelism: every PF chain of a 16-PF host at once (their
// waits are the kernel's and the firmware's, not this process's CPU), and no
// fewer than the CPUs this process may run on: max(16, CPUs), at most 64.
size_t DefaultParallelism();

ApplyReport ApplyPlan(const std::vector<std::unique_ptr<Module>>& modules, const Plan& plan,
                      const DesiredState& desired, HostContext& ctx,
                      const ApplyOptions& options = ApplyOptions());

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_CORE_ENGINE_H_
