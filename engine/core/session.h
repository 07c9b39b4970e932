// The session API: what the CLI's host commands do, as a library returning
// typed outcomes (no printing). Plan this file on this root; apply that plan;
// validate, check (doctor) and snapshot a host. The CLI parses arguments,
// calls these and renders what they return.
#ifndef PROVISIONER_ENGINE_CORE_SESSION_H_
#define PROVISIONER_ENGINE_CORE_SESSION_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/core/engine.h"
#include "engine/core/journal.h"
#include "engine/host/host_fs.h"
#include "engine/host/host_lock.h"
#include "engine/host/recording_host_fs.h"
#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/module/check.h"
#include "engine/module/module.h"
#include "engine/plan/change.h"

namespace provisioner {

// Which host, and how to reach it.
struct HostOptions {
  std::string root = "/";
  std::chrono::milliseconds settle_timeout{std::chrono::seconds(300)};
  Progress* progress = nullptr;  // optional
  Clock* clock = nullptr;        // null: RealClock()
  // The host layer over `root`; null: NewLocalHostFs (tests pass a
  // simulated kernel, test/sim).
  std::function<std::unique_ptr<HostFs>(const std::string& root)> open_fs;
};

// An opened host: its host layer, every registered module, their context.
struct Host {
  std::unique_ptr<HostFs> fs;
  std::vector<std::unique_ptr<Module>> modules;
  HostContext ctx;
};

// Fails when the root is not a directory ("--root DIR: errno text").
StatusOr<std::unique_ptr<Host>> OpenHost(const HostOptions& options);
// OpenHost, then every module's discovery.
StatusOr<HostFacts> DiscoverHost(const HostOptions& options);

// Diagnostics about host.yaml from one load of it, with the marks that
// locate them (FormatDiagnostic(file, marks, d)).
struct FileDiagnostics {
  enum class Stage {
    kLoad,   // host.yaml as written
    kRails,  // reloaded to expand spec.rails count: allGpus for `gpus` GPUs
    kPlan,   // the modules' plans
  };
  Stage stage = Stage::kLoad;
  std::vector<Diagnostic> items;
  MarkIndex marks;
  size_t gpus = 0;  // kRails
  int errors() const;
};

// Loads host.yaml: the state, or nullopt with the diagnostics saying why.
struct LoadOutcome {
  std::optional<DesiredState> desired;  // nullopt when there are errors
  FileDiagnostics diagnostics;
};
LoadOutcome LoadFile(const std::string& file, const std::string* text = nullptr);

// Expands spec.rails count: allGpus for the host's GPUs (the document
// `desired` was loaded from, DesiredState::unexpanded; `file` names it);
// a no-op for any other desired state. False when the reload has errors.
bool ExpandRails(const std::string& file, const HostFacts& facts, DesiredState* desired,
                 FileDiagnostics* diagnostics);

// Plan diagnostics about items spec.rails expanded into name the rails field.
std::vector<Diagnostic> AttributeToRails(const DesiredState& desired,
                                         std::vector<Diagnostic> diags);

// The digest of the facts a plan depends on (without the root's path: a
// tree may move), as saved plans record it.
std::string FactsDigest(const HostFacts& facts);

struct PlanRequest {
  std::string file;  // host.yaml
  // Its bytes, when the caller has read them already (plan reads the file
  // once to tell a saved plan from a host.yaml): loaded instead of the file.
  std::optional<std::string> text;
  HostOptions host;
  // Hold the apply lock from before discovery until the outcome is destroyed
  // (apply, not a dry run).
  bool lock = false;
  std::chrono::milliseconds lock_timeout{0};
};

// Changes an apply made that take effect at the next boot ([{id, after}]).
inline constexpr char kPendingRebootPath[] = "/run/provisioner/pending-reboot";

struct PlanOutcome {
  // ok, or why there is no plan: host.yaml's errors (file_invalid), the
  // host's (root, lock, discovery, journal) or why a saved plan is refused.
  Status status;
  // Every batch of diagnostics, in the order they arose: the load, the
  // spec.rails count: allGpus reload, the plan. Warnings too.
  std::vector<FileDiagnostics> diagnostics;
  // host.yaml has errors: the last batch of diagnostics says which.
  bool file_invalid = false;
  // Set when status is ok (and, but for `plan`, partly before).
  std::unique_ptr<Host> host;
  HostLock lock;
  DesiredState desired;
  Plan plan;
  std::string facts_digest;
  std::optional<HostFacts> facts;  // what PlanFile planned from (not a saved plan)
  // Ids of changes taken out of `plan` on purpose (the agent's pending
  // ones): ApplyPlanned's convergence check does not fail on them.
  std::set<std::string> held_back;
  std::optional<Journal> interrupted;  // an earlier apply's journal, found under the root
  // A saved plan whose host changed since, into the state it plans: planning
  // again gives no change (its apply ran already). Not refused: nothing to do.
  bool already_applied = false;
  // The host's network PFs (address, netdevs, vendor:device): the
  // candidates a "selects no PCI function" error lists.
  struct NicHere {
    std::string pci_address;
    std::vector<std::string> netdevs;
    std::string id;  // "15b3:1017"
  };
  std::vector<NicHere> nics_here;
};

// validate + discover + plan.
PlanOutcome PlanFile(const PlanRequest& request);

// A saved plan (plan --out): replanned from its host.yaml (request.file is
// ignored; request.host.root is the saved root unless `root_given`), refused
// when host.yaml or the host changed since, or a change needs a module this
// build lacks; the plan is then exactly the saved changes. `plan_file` names
// the saved plan in messages.
PlanOutcome PlanSavedFile(const SavedPlan& saved, const std::string& plan_file,
                          PlanRequest request, bool root_given);

// The record `plan --out` writes: the plan, its root, host.yaml's absolute
// path and both digests (host.yaml's is read now; "" when it cannot be).
nlohmann::json SavedPlanRecord(const PlanOutcome& planned, const std::string& file,
                               const std::string& root);

// apply --rollback: the plan becomes the inverse of what the interrupted
// apply may have changed, newest first (warnings cleared). False (nothing
// done) when there is no interrupted apply.
bool UseRollbackPlan(PlanOutcome* planned);

struct ApplyRequest {
  bool dry_run = false;
  bool rollback = false;  // the plan is UseRollbackPlan's: no convergence check
  size_t parallelism = 1;  // changes applied at once at most (engine.h ApplyOptions)
};

enum class ChangeStatus {
  kPlanned,           // not run (dry run, nothing to do)
  kApplied,           // made and verified
  kDeferredToReboot,  // made; the kernel applies it at the next boot
  kFailed,
  kRolledBack,
  kRollbackFailed,
  kNotAttempted,  // planned; apply stopped (a failure, a signal) before it started
};
const char* ChangeStatusName(ChangeStatus s);  // "applied", "deferred-to-reboot", ...

struct ChangeOutcome {
  Change change;
  ChangeStatus status = ChangeStatus::kPlanned;
  std::string error;  // failed, rollback-failed
  std::string note;   // deferred-to-reboot: why
  // Run changes: when it started (from the apply's start) and how long it took.
  std::chrono::milliseconds start{0};
  std::chrono::milliseconds duration{0};
};

struct ApplyOutcome {
  // True when changes ran; false for a dry run, an empty plan (or rollback).
  bool ran = false;
  // Ok, or the first failure (with context): apply, verify, journal, convergence.
  Status status;
  std::vector<ChangeOutcome> changes;      // in the order run (planned: not run)
  std::vector<ChangeOutcome> rolled_back;  // inverse changes run after a failure
  // Every planned change once, in plan order (then those a firmware reset's
  // second round planned anew), with its status at exit: applied (or
  // deferred-to-reboot), rolled-back (made, then undone and verified),
  // rollback-failed (made, its undo failed: still on the host), failed (the
  // change that failed; undone with the rest), not-attempted.
  std::vector<ChangeOutcome> final;
  // The host at exit: changes that stay made (applied or deferred to the
  // reboot); 0 after a complete rollback.
  size_t applied = 0;
  size_t rolled_back_count = 0;
  size_t rollback_failed = 0;
  size_t failed = 0;
  size_t not_attempted = 0;
  bool reboot_required = false;
  // Settling an interrupted apply's journal when nothing ran, and writing
  // /run/reboot-required: problems to report, not failures of the apply
  // (journal_status fails a rollback that had nothing to undo).
  Status journal_status;
  Status reboot_marker_status;
  size_t parallelism = 1;    // changes run at once at most
  size_t longest_chain = 0;  // the plan graph's longest dependency chain
};

// Applies `planned` (PlanFile or PlanSavedFile, status ok): each change
// applied, verified, rolled back on failure (engine.h ApplyPlan) with the
// journal; the reboot marker written when a reboot is needed.
ApplyOutcome ApplyPlanned(PlanOutcome& planned, const ApplyRequest& request);
// The outcome of an engine ApplyReport of `plan` (the counts above).
ApplyOutcome OutcomeOf(const ApplyReport& report, const Plan& plan);

// validate [--root]: host.yaml loaded for the host's GPU count and its
// nearGpu selectors checked against the host when `facts` is given.
struct ValidateOutcome {
  std::optional<DesiredState> desired;  // nullopt when there are errors
  FileDiagnostics diagnostics;
  std::string expanded_json;  // after spec.rails expansion (--show-expanded)
};
ValidateOutcome ValidateFile(const std::string& file, const HostFacts* facts);

// doctor: every module's checks, failures first, then warnings, each in
// module order. `desired` may be null.
std::vector<CheckResult> CheckHost(const DesiredState* desired, const HostFacts& facts);

// discover's output: the host-level keys (formatVersion, root, kernel) and
// every registered module's rendering of its facts, in module order
// (Module::RenderFactsJson, Module::RenderFactsTable).
nlohmann::json FactsToJson(const HostFacts& facts);
std::string RenderFactsTable(const HostFacts& facts);

// snapshot: discovery through a recording host layer, then exactly what it
// read copied into `output_dir` (missing, or an empty directory).
StatusOr<SnapshotStats> SnapshotHost(const std::string& root, const std::string& output_dir);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_CORE_SESSION_H_
